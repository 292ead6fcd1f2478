package demo

import (
	"bytes"
	"context"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/capture"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/trace"
	"github.com/gorxe/gorxe/netio"
	"github.com/gorxe/gorxe/packet"
)

// datagram builds a packet with headers h and payload n bytes long, ICRC and all, as sent from
// src to dst with gorxe's IPv4 framing (ID 0, DF).
func datagram(t *testing.T, src, dst string, h *packet.Headers, n int) *netio.Message {
	t.Helper()
	m := &netio.Message{Src: netip.MustParseAddrPort(src), Dst: netip.MustParseAddrPort(dst)}
	buf, _, err := packet.AppendPacketRoom(nil, h, n)
	require.NoError(t, err)
	env := packet.Envelope{Src: m.Src, Dst: m.Dst, IPFlags: packet.IPv4DontFragment}
	require.NoError(t, env.PutICRC(buf))
	m.Buf = buf
	return m
}

func TestSummarizeOnAnyPort(t *testing.T) {
	write := packet.Headers{
		BTH:  packet.BTHFields{Opcode: packet.RCRDMAWriteFirst, PKey: 0xFFFF, DestQP: 0x11, PSN: 7},
		RETH: packet.RETHFields{VirtualAddress: 0x1000, RKey: 0x22, DMALength: 2048},
	}
	m := datagram(t, "10.0.0.1:49408", "10.0.0.2:47910", &write, 1024)
	s, err := summarize("3", m)
	require.NoError(t, err)
	assert.Equal(t, "#3 10.0.0.1:49408 > 10.0.0.2:47910 RC_RDMA_WRITE_FIRST dqpn=0x000011 psn=7 va=0x0000000000001000 rkey=0x00000022 dmalen=2048 len=1024 icrc=ok", s.line)
	assert.True(t, s.icrcOK)

	m.Buf[len(m.Buf)-10] ^= 1 // a payload bit: still decodes, the ICRC no longer matches
	s, err = summarize("4", m)
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(s.line, " len=1024 icrc=BAD"), s.line)

	rnr := packet.Headers{
		BTH:  packet.BTHFields{Opcode: packet.RCAcknowledge, PKey: 0xFFFF, DestQP: 0x11, PSN: 9},
		AETH: packet.AETHFields{Syndrome: packet.SyndromeRNRNAK(18), MSN: 4},
	}
	s, err = summarize("5", datagram(t, "10.0.0.2:49408", "10.0.0.1:4791", &rnr, 0))
	require.NoError(t, err)
	assert.Equal(t, "#5 10.0.0.2:49408 > 10.0.0.1:4791 RC_ACKNOWLEDGE dqpn=0x000011 psn=9 syndrome=RNR_NAK(5.12ms) msn=4 len=0 icrc=ok", s.line)

	_, err = summarize("6", &netio.Message{Src: m.Src, Dst: m.Dst, Buf: m.Buf[:8]})
	require.Error(t, err)
	assert.Equal(t, "#6 10.0.0.1:49408 > 10.0.0.2:47910 undecodable: "+packet.ErrTruncated.Error(), err.Error())
}

// TestResendNotes: what the narration says about a sender's PSNs going back.
func TestResendNotes(t *testing.T) {
	a := netip.MustParseAddrPort("10.0.0.1:49408")
	b := netip.MustParseAddrPort("10.0.0.2:49408")
	r := newResends(1024)
	note := func(src netip.AddrPort, op packet.Opcode, psn packet.PSN, dmaLen uint32, dir netio.Direction) string {
		return strings.Join(r.note(src, &summary{opcode: op, dqpn: 0x11, psn: psn, dmaLen: dmaLen}, dir), " ")
	}
	assert.Equal(t, "", note(a, packet.RCRDMAReadRequest, 100, 4096, netio.Sent)) // reserves 100..103
	assert.Equal(t, "", note(b, packet.RCRDMAReadResponseFirst, 100, 0, netio.Sent))
	assert.Equal(t, noteLost, note(b, packet.RCRDMAReadResponseMiddle, 101, 0, netio.Lost))
	assert.Equal(t, "", note(b, packet.RCRDMAReadResponseMiddle, 102, 0, netio.Sent))
	// The retried READ asks for the tail from 101: behind what the first request reserved.
	assert.Equal(t, noteRetransmission, note(a, packet.RCRDMAReadRequest, 101, 3072, netio.Sent))
	assert.Equal(t, noteRetransmission, note(b, packet.RCRDMAReadResponseFirst, 101, 0, netio.Sent))
	assert.Equal(t, noteDuplicate, note(b, packet.RCRDMAReadResponseFirst, 101, 0, netio.Sent|netio.Duplicate))
	assert.Equal(t, "", note(a, packet.RCSendOnly, 104, 0, netio.Sent))
	// An RNR NAK and then the ACK of the same PSN: not a repeat. An ACK behind it is.
	assert.Equal(t, "", note(b, packet.RCAcknowledge, 104, 0, netio.Sent))
	assert.Equal(t, noteRetransmission, note(a, packet.RCSendOnly, 104, 0, netio.Sent))
	assert.Equal(t, "", note(b, packet.RCAcknowledge, 104, 0, netio.Sent))
	assert.Equal(t, noteAckAgain, note(b, packet.RCAcknowledge, 103, 0, netio.Sent))
	assert.Equal(t, noteCorrupted, note(a, packet.RCSendOnly, 3, 0, netio.Sent|netio.Corrupt))
	assert.Equal(t, noteDelayed, note(a, packet.RCSendOnly, 104, 0, netio.Sent|netio.Delayed))
}

// TestDemoDrawsLadder: -trace draws the run as gorxe trace draws a capture.
func TestDemoDrawsLadder(t *testing.T) {
	var svg bytes.Buffer
	run(t, Options{A: netip.MustParseAddr("127.30.4.1"), B: netip.MustParseAddr("127.30.4.2"), Trace: &svg, TraceFormat: trace.FormatSVG})
	require.True(t, strings.HasPrefix(svg.String(), "<svg "), "%.80s", svg.String())
	for _, want := range []string{"RC_RDMA_READ_REQUEST", "RC_ATOMIC_ACKNOWLEDGE", "UD_SEND_ONLY", "127.30.4.2"} {
		assert.Contains(t, svg.String(), want)
	}
}

// TestDemoLadderDrawsDrops: under fault injection the demo's ladder is what gorxe trace draws of
// the run's -pcap capture, the packets fault injection dropped included, each drawn as an arrow
// that stops short.
func TestDemoLadderDrawsDrops(t *testing.T) {
	faults, err := netio.ParseFaultConfig("loss=0.1,seed=11")
	require.NoError(t, err)
	var pcap, svg bytes.Buffer
	run(t, Options{A: netip.MustParseAddr("127.30.4.9"), B: netip.MustParseAddr("127.30.4.10"), Faults: faults,
		Pcap: &pcap, Trace: &svg, TraceFormat: trace.FormatSVG})

	r, err := pcapgo.NewNgReader(bytes.NewReader(pcap.Bytes()), pcapgo.DefaultNgReaderOptions)
	require.NoError(t, err)
	lost := 0
	for {
		_, _, opts, err := r.ReadPacketDataWithOptions()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		if capture.Fault(opts.Comments).Base() == netio.Lost {
			lost++
		}
	}
	require.Positive(t, lost, "the seed drops packets")
	assert.Equal(t, lost, len(regexp.MustCompile(`<g class="pkt [^"]* lost"`).FindAllString(svg.String(), -1)),
		"one short arrow per dropped packet")

	// gorxe trace titles a diagram with the capture's file name.
	path := filepath.Join(t.TempDir(), "gorxe demo")
	require.NoError(t, os.WriteFile(path, pcap.Bytes(), 0o600))
	var want, stderr bytes.Buffer
	require.NoError(t, trace.Run(trace.Options{Input: path, Format: trace.FormatSVG, Gap: trace.DefaultGap,
		Collapse: trace.DefaultCollapse}, &want, &stderr))
	require.Equal(t, want.String(), svg.String())
}

// TestDemoLadderOnOtherPort: the capture the ladder is drawn from records the run's port, so a
// run off 4791 draws its ladder as fully as one on it.
func TestDemoLadderOnOtherPort(t *testing.T) {
	var out, svg bytes.Buffer
	err := Run(context.Background(), Options{A: netip.MustParseAddr("127.30.4.5"), B: netip.MustParseAddr("127.30.4.6"),
		Port: 47914, Trace: &svg}, &out)
	require.NoError(t, err)
	for _, want := range []string{"RC_RDMA_READ_REQUEST", "RC_ATOMIC_ACKNOWLEDGE", "UD_SEND_ONLY", "127.30.4.6"} {
		assert.Contains(t, svg.String(), want)
	}
}
