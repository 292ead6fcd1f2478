package dump

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/capture"
	"github.com/gorxe/gorxe/packet"
)

// demoPort is a port gorxe's tools may be told to use instead of 4791.
const demoPort = 5000

// demoFrames returns a small RC exchange as gorxe's demo captures it: raw IP
// frames with the headers gorxe's sockets send (IPv4 Identification 0, DF),
// here on UDP port demoPort, and the lines `gorxe dump` prints for them.
// Port 9 (discard) carries one datagram of something else.
func demoFrames(t testing.TB) ([][]byte, []string) {
	t.Helper()
	a := netip.MustParseAddrPort("10.0.0.1:49152")
	b := netip.MustParseAddrPort("10.0.0.2:5000")
	aToB := packet.Envelope{Src: a, Dst: b, HopLimit: 64, IPFlags: packet.IPv4DontFragment}
	bToA := packet.Envelope{Src: netip.AddrPortFrom(b.Addr(), 49152), Dst: netip.AddrPortFrom(a.Addr(), demoPort),
		HopLimit: 64, IPFlags: packet.IPv4DontFragment}
	frame := func(env packet.Envelope, h packet.Headers, payload []byte) []byte {
		pkt, err := packet.AppendPacket(nil, &h, payload)
		require.NoError(t, err)
		require.NoError(t, env.PutICRC(pkt))
		f, err := env.AppendHeaders(nil, len(pkt))
		require.NoError(t, err)
		return append(f, pkt...)
	}
	bth := func(op packet.Opcode, qp uint32, psn packet.PSN, ack bool) packet.BTHFields {
		return packet.BTHFields{Opcode: op, PKey: 0xFFFF, DestQP: qp, PSN: psn, AckReq: ack}
	}
	frames := [][]byte{
		frame(aToB, packet.Headers{BTH: bth(packet.RCSendOnlyWithImmediate, 0x12, 100, true),
			ImmDt: packet.ImmDtFields{ImmediateData: 0x01020304}}, []byte("hello")),
		frame(bToA, packet.Headers{BTH: bth(packet.RCAcknowledge, 0x11, 100, false),
			AETH: packet.AETHFields{Syndrome: packet.SyndromeACKUnlimited, MSN: 1}}, nil),
		frame(aToB, packet.Headers{BTH: bth(packet.RCRDMAWriteOnly, 0x12, 101, true),
			RETH: packet.RETHFields{VirtualAddress: 0x7f0000001000, RKey: 0x42, DMALength: 3}}, []byte("abc")),
		frame(bToA, packet.Headers{BTH: bth(packet.RCAcknowledge, 0x11, 101, false),
			AETH: packet.AETHFields{Syndrome: packet.SyndromeACKUnlimited, MSN: 2}}, nil),
	}
	other := packet.Envelope{Src: a, Dst: netip.MustParseAddrPort("10.0.0.2:9"), HopLimit: 64}
	f, err := other.AppendHeaders(nil, 4)
	require.NoError(t, err)
	frames = append(frames, append(f, "ping"...))
	lines := []string{
		"#1 0.000000 10.0.0.1:49152 > 10.0.0.2:5000 RC_SEND_ONLY_WITH_IMMEDIATE dqpn=0x000012 psn=100 ackreq imm=0x01020304 len=5 icrc=ok",
		"#2 0.000250 10.0.0.2:49152 > 10.0.0.1:5000 RC_ACKNOWLEDGE dqpn=0x000011 psn=100 syndrome=ACK msn=1 len=0 icrc=ok",
		"#3 0.000500 10.0.0.1:49152 > 10.0.0.2:5000 RC_RDMA_WRITE_ONLY dqpn=0x000012 psn=101 ackreq va=0x00007f0000001000 rkey=0x00000042 dmalen=3 len=3 icrc=ok",
		"#4 0.000750 10.0.0.2:49152 > 10.0.0.1:5000 RC_ACKNOWLEDGE dqpn=0x000011 psn=101 syndrome=ACK msn=2 len=0 icrc=ok",
	}
	return frames, lines
}

var demoStart = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func captureInfo(i, n int) gopacket.CaptureInfo {
	return gopacket.CaptureInfo{Timestamp: demoStart.Add(time.Duration(i) * 250 * time.Microsecond), CaptureLength: n, Length: n}
}

// demoPcapng writes frames to a pcapng file whose interface announces demoPort, as gorxe's
// captures do.
func demoPcapng(t testing.TB, frames [][]byte) []byte {
	t.Helper()
	var b bytes.Buffer
	intf := pcapgo.DefaultNgInterface
	intf.LinkType = gplayers.LinkTypeRaw
	intf.Comment = capture.PortComment(demoPort)
	w, err := pcapgo.NewNgWriterInterface(&b, intf, pcapgo.DefaultNgWriterOptions)
	require.NoError(t, err)
	for i, f := range frames {
		require.NoError(t, w.WritePacket(captureInfo(i, len(f)), f))
	}
	require.NoError(t, w.Flush())
	return b.Bytes()
}

// demoPcap writes frames to a classic pcap file, which has no place for a note.
func demoPcap(t testing.TB, frames [][]byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := pcapgo.NewWriter(&b)
	require.NoError(t, w.WriteFileHeader(65535, gplayers.LinkTypeRaw))
	for i, f := range frames {
		require.NoError(t, w.WritePacket(captureInfo(i, len(f)), f))
	}
	return b.Bytes()
}

func runWith(t *testing.T, file []byte, o Options) (string, string, Stats) {
	t.Helper()
	var out, errOut bytes.Buffer
	st, err := RunOptions(&out, &errOut, bytes.NewReader(file), o)
	require.NoError(t, err)
	return out.String(), errOut.String(), st
}

// TestDemoCaptureOnOtherPort: a capture gorxe wrote on port 5000 decodes
// fully without being told the port, every header and ICRC included.
func TestDemoCaptureOnOtherPort(t *testing.T) {
	frames, lines := demoFrames(t)
	out, errOut, st := runWith(t, demoPcapng(t, frames), Options{Time: TimeRelative})
	assert.Equal(t, strings.Join(lines, "\n")+"\n", out)
	assert.Empty(t, errOut)
	assert.Equal(t, Stats{Frames: 5, RoCE: 4, OtherUDP: 1}, st)

	out, _, _ = runWith(t, demoPcapng(t, frames), Options{Format: FormatVerbose})
	assert.Equal(t, 4, strings.Count(out, "verified: OK"))
	assert.Contains(t, out, "    Immediate Data         0x01020304")
	assert.Contains(t, out, "    DMA Length             3  ")
	assert.Contains(t, out, "    Destination Port       5000                 RoCEv2 moved off its IANA port, 4791, as test setups do\n")
}

// TestPcapNeedsThePort: a classic pcap file cannot announce its port; without
// it the dump says what it found instead, with it the dump is complete.
func TestPcapNeedsThePort(t *testing.T) {
	frames, lines := demoFrames(t)
	pcap := demoPcap(t, frames)

	out, errOut, st := runWith(t, pcap, Options{Time: TimeRelative})
	assert.Empty(t, out)
	assert.Equal(t, "no RoCEv2 packets in 5 frames: 5 UDP, to ports 5000 (4), 9 (1); RoCEv2 was looked for on UDP port 4791\n", errOut)
	assert.Equal(t, Stats{Frames: 5, OtherUDP: 5}, st)

	out, errOut, st = runWith(t, pcap, Options{Time: TimeRelative, Ports: []uint16{demoPort}})
	assert.Equal(t, strings.Join(lines, "\n")+"\n", out)
	assert.Empty(t, errOut)
	assert.Equal(t, Stats{Frames: 5, RoCE: 4, OtherUDP: 1}, st)
}

// TestDecoderPortsAreItsOwn: AddPort changes one decoder, not gopacket's
// table nor other decoders.
func TestDecoderPortsAreItsOwn(t *testing.T) {
	frames, _ := demoFrames(t)
	f := Frame{Index: 1, LinkType: gplayers.LinkTypeRaw, Data: frames[0], Length: len(frames[0])}
	d := NewDecoder()
	d.AddPort(demoPort)
	d.AddPort(demoPort)
	d.AddPort(packet.UDPPort)
	assert.Equal(t, []uint16{packet.UDPPort, demoPort}, d.Ports())
	p, err := d.Decode(f)
	require.NoError(t, err)
	assert.Equal(t, []byte{1, 2, 3, 4}, p.Header(packet.HeaderImmDt))
	assert.Nil(t, p.Header(packet.HeaderRETH))

	_, err = NewDecoder().Decode(f)
	assert.ErrorIs(t, err, ErrNotRoCE)

	// A cut RoCE packet on the added port is reported as one.
	cut := Frame{Index: 2, LinkType: gplayers.LinkTypeRaw, Data: frames[0][:40], Length: len(frames[0])}
	_, err = d.Decode(cut)
	assert.ErrorIs(t, err, ErrFrameTruncated)
}

// TestDetectPorts: a classic pcap file on another port decodes without being
// told the port, learnt from the first packet whose ICRC verifies; nothing
// else is taken for RoCE.
func TestDetectPorts(t *testing.T) {
	frames, lines := demoFrames(t)
	out, errOut, st := runWith(t, demoPcap(t, frames), Options{Time: TimeRelative, DetectPorts: true})
	assert.Equal(t, strings.Join(lines, "\n")+"\n", out)
	assert.Equal(t, "frame 1: RoCEv2 on UDP port 5000 (its ICRC verifies); decoding that port as RoCEv2 from here on\n", errOut)
	assert.Equal(t, Stats{Frames: 5, RoCE: 4, OtherUDP: 1}, st)

	// A first packet with a bad ICRC proves nothing: the port is learnt
	// from the next one, and the bad one is not shown.
	frames[0][len(frames[0])-1] ^= 0xFF
	out, errOut, st = runWith(t, demoPcap(t, frames), Options{Time: TimeRelative, DetectPorts: true})
	assert.Equal(t, strings.Join(lines[1:], "\n")+"\n", out)
	assert.Equal(t, "frame 2: RoCEv2 on UDP port 5000 (its ICRC verifies); decoding that port as RoCEv2 from here on\n", errOut)
	assert.Equal(t, Stats{Frames: 5, RoCE: 3, OtherUDP: 2}, st)

	// Once the port is known, a corrupted packet on it is shown, as BAD.
	frames[0], frames[1] = frames[1], frames[0]
	out, _, st = runWith(t, demoPcap(t, frames), Options{DetectPorts: true})
	assert.Contains(t, out, "#2 10.0.0.1:49152 > 10.0.0.2:5000 RC_SEND_ONLY_WITH_IMMEDIATE")
	assert.Contains(t, out, "icrc=BAD")
	assert.Equal(t, 1, st.BadICRC)

	d := NewDecoder()
	d.DetectPorts()
	assert.Empty(t, d.Detected())
}
