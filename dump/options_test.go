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

	"github.com/gorxe/gorxe/cm/mad"
	"github.com/gorxe/gorxe/packet"
)

func TestAddOps(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []packet.Opcode
		cm   []mad.AttrID
	}{
		{"RC_FETCH_ADD", []packet.Opcode{packet.RCFetchAdd}, nil},
		{"rc_fetch_add", []packet.Opcode{packet.RCFetchAdd}, nil},
		{"20", []packet.Opcode{packet.RCFetchAdd}, nil},
		{"0x11, 0x81", []packet.Opcode{packet.RCAcknowledge, packet.CNP}, nil},
		{"SEND_ONLY", []packet.Opcode{packet.RCSendOnly, packet.UCSendOnly, 0x44, packet.UDSendOnly}, nil}, // 0x44: RD
		{"ACKNOWLEDGE", []packet.Opcode{packet.RCAcknowledge, packet.NewOpcode(packet.TransportRD, packet.OperationAcknowledge)}, nil},
		{"RDMA_READ_RESPONSE,ACKNOWLEDGE", []packet.Opcode{packet.RCRDMAReadResponseFirst, packet.RCRDMAReadResponseMiddle,
			packet.RCRDMAReadResponseLast, packet.RCRDMAReadResponseOnly, packet.RCAcknowledge,
			0x4D, 0x4E, 0x4F, 0x50, 0x51}, nil},
		{"cnp,UD_SEND_ONLY,UD_SEND_ONLY", []packet.Opcode{packet.UDSendOnly, packet.CNP}, nil},
		// The connection manager's messages, by the names the line shows after "cm=".
		{"REQ", nil, []mad.AttrID{mad.AttrREQ}},
		{"rtu, DREP,REQ,sidr_rep,req", nil, []mad.AttrID{mad.AttrREQ, mad.AttrRTU, mad.AttrDREP, mad.AttrSIDRREP}},
		{"REP,REJ,MRA,DREQ,SIDR_REQ,LAP,APR", nil,
			[]mad.AttrID{mad.AttrMRA, mad.AttrREJ, mad.AttrREP, mad.AttrDREQ, mad.AttrSIDRREQ, mad.AttrLAP, mad.AttrAPR}},
		{"REP,RC_ACKNOWLEDGE", []packet.Opcode{packet.RCAcknowledge}, []mad.AttrID{mad.AttrREP}},
	} {
		var f Filter
		require.NoError(t, f.AddOps(tc.in), tc.in)
		assert.Equal(t, tc.want, f.Opcodes, tc.in)
		assert.Equal(t, tc.cm, f.CM, tc.in)
	}
	for _, bad := range []string{"", "SEND,", "0x1F", "256", "RC_SEND", "WRITE", "REQ,WRITE", "CM", "SIDR"} {
		f := Filter{Opcodes: []packet.Opcode{packet.CNP}}
		err := f.AddOps(bad)
		assert.ErrorIs(t, err, ErrBadFilter, "%q", bad)
		assert.Equal(t, Filter{Opcodes: []packet.Opcode{packet.CNP}}, f, "a bad list changes nothing: %q", bad)
	}
	var f Filter
	require.NoError(t, f.AddOps("REQ,SEND_ONLY"))
	require.NoError(t, f.AddOps("RTU,UD_SEND_ONLY,req"))
	assert.Equal(t, []packet.Opcode{packet.RCSendOnly, packet.UCSendOnly, 0x44, packet.UDSendOnly}, f.Opcodes, "lists add up")
	assert.Equal(t, []mad.AttrID{mad.AttrREQ, mad.AttrRTU}, f.CM, "lists add up")
	assert.EqualError(t, new(Filter).AddOps("WRITE"), `bad filter: "WRITE" names no opcode or connection manager message`)
}

// TestFilterCM selects connection manager messages by name, alone and with opcodes, from a
// gorxe rping capture: the handshake, RC traffic, the teardown.
func TestFilterCM(t *testing.T) {
	capture := readFile(t, "../docs/walkthrough/cm-rping.pcapng")
	run := func(ops string) []string {
		var f Filter
		require.NoError(t, f.AddOps(ops))
		out, errOut, _ := runWith(t, capture, Options{Filter: f})
		assert.Empty(t, errOut)
		var got []string
		for l := range strings.Lines(out) {
			fields := strings.Fields(l)
			msg := ""
			for _, f := range fields {
				if m, ok := strings.CutPrefix(f, "cm="); ok {
					msg = " " + m
				}
			}
			got = append(got, fields[0]+" "+fields[4]+msg)
		}
		return got
	}
	assert.Equal(t, []string{"#1 UD_SEND_ONLY REQ"}, run("REQ"))
	assert.Equal(t, []string{"#2 UD_SEND_ONLY REP", "#28 UD_SEND_ONLY DREQ", "#29 UD_SEND_ONLY DREP"}, run("dreq,REP,DREP"))
	assert.Equal(t, []string{"#3 UD_SEND_ONLY RTU", "#6 RC_RDMA_READ_REQUEST", "#18 RC_RDMA_READ_REQUEST"}, run("RTU,RDMA_READ_REQUEST"))
	assert.Len(t, run("UD_SEND_ONLY,REQ"), 5, "an opcode that every MAD has keeps them all")

	var f Filter
	require.NoError(t, f.AddOps("REJ,MRA"))
	out, errOut, st := runWith(t, capture, Options{Filter: f})
	assert.Empty(t, out)
	assert.Equal(t, "no packet matches the filter: the capture holds 29 RoCEv2 packets, none of them selected\n", errOut)
	assert.Equal(t, 29, st.Filtered)
}

// TestFilter dumps the golden capture's RC exchange on QP 0x11 and its UD
// datagrams by source QP.
func TestFilter(t *testing.T) {
	golden := readFile(t, goldenPcapng)
	f := Filter{QPs: []uint32{0x11}}
	require.NoError(t, f.AddOps("ACKNOWLEDGE"))
	out, errOut, st := runWith(t, golden, Options{Filter: f})
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
	var ud Filter
	require.NoError(t, ud.AddOps("UD_SEND_ONLY"))
	all, _, _ := runWith(t, golden, Options{Filter: ud})
	first := strings.SplitN(all, "\n", 2)[0]
	src := first[strings.Index(first, "srcqp=")+len("srcqp="):]
	src = src[:strings.IndexByte(src, ' ')]
	n, err := strconv.ParseUint(src, 0, 24)
	require.NoError(t, err)
	ud.QPs = []uint32{uint32(n)}
	out, _, _ = runWith(t, golden, Options{Filter: ud})
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
