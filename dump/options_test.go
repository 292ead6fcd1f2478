package dump

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/packet"
)

func TestParseOpcodes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []packet.Opcode
	}{
		{"RC_FETCH_ADD", []packet.Opcode{packet.RCFetchAdd}},
		{"rc_fetch_add", []packet.Opcode{packet.RCFetchAdd}},
		{"20", []packet.Opcode{packet.RCFetchAdd}},
		{"0x11, 0x81", []packet.Opcode{packet.RCAcknowledge, packet.CNP}},
		{"SEND_ONLY", []packet.Opcode{packet.RCSendOnly, packet.UCSendOnly, 0x44, packet.UDSendOnly}}, // 0x44: RD
		{"ACKNOWLEDGE", []packet.Opcode{packet.RCAcknowledge, packet.NewOpcode(packet.TransportRD, packet.OperationAcknowledge)}},
		{"RDMA_READ_RESPONSE,ACKNOWLEDGE", []packet.Opcode{packet.RCRDMAReadResponseFirst, packet.RCRDMAReadResponseMiddle,
			packet.RCRDMAReadResponseLast, packet.RCRDMAReadResponseOnly, packet.RCAcknowledge,
			0x4D, 0x4E, 0x4F, 0x50, 0x51}},
		{"cnp,UD_SEND_ONLY,UD_SEND_ONLY", []packet.Opcode{packet.UDSendOnly, packet.CNP}},
	} {
		got, err := ParseOpcodes(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
	for _, bad := range []string{"", "SEND,", "0x1F", "256", "RC_SEND", "WRITE"} {
		_, err := ParseOpcodes(bad)
		assert.ErrorIs(t, err, ErrBadFilter, "%q", bad)
	}
}

// TestFilter dumps the golden capture's RC exchange on QP 0x11 and its UD
// datagrams by source QP.
func TestFilter(t *testing.T) {
	golden := readFile(t, goldenPcapng)
	ack, err := ParseOpcodes("ACKNOWLEDGE")
	require.NoError(t, err)
	out, errOut, st := runWith(t, golden, Options{Filter: Filter{QPs: []uint32{0x11}, Opcodes: ack}})
	assert.Empty(t, errOut)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Equal(t, st.RoCE, len(lines))
	assert.Equal(t, 2540, st.RoCE+st.Filtered)
	assert.Equal(t, "#5 10.99.0.2:49441 > 10.99.0.3:4791 RC_ACKNOWLEDGE dqpn=0x000011 psn=6186380 syndrome=ACK msn=1 len=0 icrc=ok", lines[0])
	for _, l := range lines {
		assert.Contains(t, l, " RC_ACKNOWLEDGE dqpn=0x000011 ")
	}

	// Every UD datagram names its sender in the DETH: filtering on the
	// sender keeps the datagrams from it besides those to it.
	ud, err := ParseOpcodes("UD_SEND_ONLY")
	require.NoError(t, err)
	all, _, _ := runWith(t, golden, Options{Filter: Filter{Opcodes: ud}})
	first := strings.SplitN(all, "\n", 2)[0]
	src := first[strings.Index(first, "srcqp=")+len("srcqp="):]
	src = src[:strings.IndexByte(src, ' ')]
	n, err := strconv.ParseUint(src, 0, 24)
	require.NoError(t, err)
	out, _, _ = runWith(t, golden, Options{Filter: Filter{Opcodes: ud, QPs: []uint32{uint32(n)}}})
	assert.Contains(t, out, first+"\n")

	out, errOut, st = runWith(t, golden, Options{Filter: Filter{QPs: []uint32{0xABCDEF}}})
	assert.Empty(t, out)
	assert.Equal(t, "no packet matches the filter: the capture holds 2540 RoCEv2 packets, none of them selected\n", errOut)
	assert.Equal(t, Stats{Frames: 2540, Filtered: 2540}, st)
}

func TestTimeFormats(t *testing.T) {
	base := time.Date(2026, 1, 2, 3, 4, 5, 600_000_000, time.UTC)
	assert.Equal(t, "0.000000", TimeRelative.stamp(base, base))
	assert.Equal(t, "61.000250", TimeRelative.stamp(base.Add(61*time.Second+250*time.Microsecond), base))
	assert.Equal(t, "-0.500000", TimeRelative.stamp(base.Add(-500*time.Millisecond), base))
	assert.Equal(t, "2026-01-02T03:04:05.600000Z", TimeAbsolute.stamp(base, base))
	assert.Equal(t, "2026-01-02T03:04:05.600000Z", TimeAbsolute.stamp(base.In(time.FixedZone("X", 3600)), base))
	assert.Empty(t, TimeNone.stamp(base, base))

	frames, lines := demoFrames(t)
	out, _, _ := runWith(t, demoPcapng(t, frames), Options{Time: TimeAbsolute, Format: FormatVerbose})
	want := strings.Replace(lines[1], "#2 0.000250", "#2 2026-11-22T12:00:00.000250Z", 1)
	assert.Contains(t, out, "\n"+want+"\n  IPv4: ")
}

func TestEmptySummaries(t *testing.T) {
	var b bytes.Buffer
	w := pcapgo.NewWriter(&b)
	require.NoError(t, w.WriteFileHeader(65535, gplayers.LinkTypeEthernet))
	_, errOut, _ := runWith(t, b.Bytes(), Options{Ports: []uint16{5000, 6000}})
	assert.Equal(t, "no RoCEv2 packets in 0 frames; RoCEv2 was looked for on UDP ports 4791, 5000, 6000\n", errOut)

	require.NoError(t, w.WritePacket(captureInfo(0, 20), make([]byte, 20)))
	_, errOut, _ = runWith(t, b.Bytes(), Options{})
	assert.Equal(t, "no RoCEv2 packets in 1 frame, none of them UDP; RoCEv2 was looked for on UDP port 4791\n", errOut)

	st := Stats{Frames: 30, OtherUDP: 30}
	ports := map[uint16]int{}
	for p := range uint16(10) {
		ports[1000+p] = 3
	}
	assert.Equal(t, "no RoCEv2 packets in 30 frames: 30 UDP, to ports 1000 (3), 1001 (3), 1002 (3), 1003 (3), 1004 (3), 1005 (3), 1006 (3), 1007 (3) and 2 more; RoCEv2 was looked for on UDP port 4791",
		emptySummary(st, ports, []uint16{4791}, false))
	assert.Equal(t, "no RoCEv2 packets in 30 frames, none of them UDP; RoCEv2 was looked for on UDP port 4791 and on any port a packet with a verified ICRC was sent to",
		emptySummary(Stats{Frames: 30}, nil, []uint16{4791}, true))
}
