package demo

import (
	"bytes"
	"io"
	"net/netip"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/capture"
	"github.com/gorxe/gorxe/netio"
)

// TestCheckWireOrderCatchesMisorderedBatch: the checker the fault test relies on rejects the
// narration of a batch whose lost WRITE_LAST was shown before the WRITE_MIDDLE sent earlier, and
// accepts the same packets in wire order followed by go-back-N.
func TestCheckWireOrderCatchesMisorderedBatch(t *testing.T) {
	const (
		first  = "A→B  #1 10.0.0.1:49408 > 10.0.0.2:4791 RC_RDMA_WRITE_FIRST dqpn=0x000010 psn=100 len=1024 icrc=ok"
		middle = "A→B  #2 10.0.0.1:49408 > 10.0.0.2:4791 RC_RDMA_WRITE_MIDDLE dqpn=0x000010 psn=101 len=1024 icrc=ok"
		last   = "A→B  #3 10.0.0.1:49408 > 10.0.0.2:4791 RC_RDMA_WRITE_LAST dqpn=0x000010 psn=102 ackreq len=8 icrc=ok  ✗ LOST (fault injection)"
		resend = "A→B  #4 10.0.0.1:49408 > 10.0.0.2:4791 RC_RDMA_WRITE_LAST dqpn=0x000010 psn=102 ackreq len=8 icrc=ok  (retransmission)"
		ack    = "B→A  #5 10.0.0.2:49408 > 10.0.0.1:4791 RC_ACKNOWLEDGE dqpn=0x000010 psn=102 syndrome=ACK msn=1 len=0 icrc=ok"
	)
	require.NoError(t, checkWireOrder([]string{first, middle, last, resend, ack}))
	require.NoError(t, checkWireOrder([]string{first, middle, last, resend, resend + "  DUPLICATE (fault injection)", ack}))
	err := checkWireOrder([]string{first, last, middle, resend, ack})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "RC_RDMA_WRITE_MIDDLE psn=101 after psn=102, not marked as sent before")
	// Marking the misplaced MIDDLE as a retransmission does not hide it: PSN 101 was never sent.
	err = checkWireOrder([]string{first, last, middle + "  (retransmission)"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "psn=101 was never narrated on this connection")
}

// TestFaultNarrationInWireOrder runs the demo with seeded loss, duplication and corruption: every
// step still verifies, each sender's PSNs go back only on packets marked as sent before, and the
// capture's frames carry the same fault comments as the narration's lines of the same number.
func TestFaultNarrationInWireOrder(t *testing.T) {
	faults, err := netio.ParseFaultConfig("loss=0.1,dup=0.05,corrupt=0.05,seed=11")
	require.NoError(t, err)
	var pcap bytes.Buffer
	out := run(t, Options{A: netip.MustParseAddr("127.30.2.1"), B: netip.MustParseAddr("127.30.2.2"), Faults: faults, Pcap: &pcap})
	lines := strings.Split(out, "\n")
	require.NoError(t, checkWireOrder(lines), out)
	for _, want := range []string{noteLost, noteRetransmission, "All 9 steps verified."} {
		assert.Contains(t, out, want)
	}

	notes := map[int]string{}
	n := 0
	for _, l := range lines {
		if p, ok := parsePacketLine(l); ok {
			notes[p.frame] = p.rest
			n++
		}
	}
	r, err := pcapgo.NewNgReader(bytes.NewReader(pcap.Bytes()), pcapgo.DefaultNgReaderOptions)
	require.NoError(t, err)
	frame := 0
	for {
		_, _, opts, err := r.ReadPacketDataWithOptions()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		frame++
		comment := strings.Join(opts.Comments, " ")
		for mark, word := range map[string]string{"LOST": "lost", "DUPLICATE": "duplicate", "CORRUPTED": "corrupted", "DELAYED": "delayed"} {
			assert.Equal(t, strings.Contains(notes[frame], mark), strings.Contains(comment, word),
				"frame %d: narrated %q, capture comment %q", frame, notes[frame], comment)
		}
	}
	assert.Equal(t, n, frame, "the capture holds every narrated packet")
}

// TestDemoOnOtherPort: on a port other than 4791 every packet still decodes (the narration does
// not depend on a port registration), and the capture records the port.
func TestDemoOnOtherPort(t *testing.T) {
	const port = 47913
	var pcap bytes.Buffer
	out := run(t, Options{A: netip.MustParseAddr("127.30.3.1"), B: netip.MustParseAddr("127.30.3.2"), Port: port, Pcap: &pcap})
	assert.Contains(t, out, "talking over UDP port 47913.")
	packets := 0
	inStep := false
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "Step ") && !strings.HasPrefix(l, "Step 0"):
			inStep = true
		case strings.HasPrefix(l, "Counters:"):
			inStep = false
		case inStep && strings.HasPrefix(l, "    "):
			p, ok := parsePacketLine(l)
			require.True(t, ok, "not a decoded packet: %q", l)
			assert.Equal(t, uint16(port), p.dst.Port(), l)
			assert.Contains(t, p.rest, " icrc=ok", l) // a slow machine may add "(retransmission)"
			packets++
		}
	}
	assert.GreaterOrEqual(t, packets, 32, "a clean run sends 32 packets at least")

	r, err := pcapgo.NewNgReader(bytes.NewReader(pcap.Bytes()), pcapgo.DefaultNgReaderOptions)
	require.NoError(t, err)
	intf, err := r.Interface(0)
	require.NoError(t, err)
	assert.Equal(t, []uint16{port}, capture.CommentPorts(intf.Comment), intf.Comment)
}
