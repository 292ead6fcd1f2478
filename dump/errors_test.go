package dump

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/layers"
	"github.com/gorxe/gorxe/packet"
)

// record is one frame of a synthetic capture: its bytes and its length on
// the wire (0: the same).
type record struct {
	data    []byte
	wireLen int
}

// pcapOf returns a pcap capture of link type lt holding recs.
func pcapOf(t *testing.T, lt gplayers.LinkType, recs ...record) []byte {
	t.Helper()
	var b bytes.Buffer
	w := pcapgo.NewWriter(&b)
	require.NoError(t, w.WriteFileHeader(65535, lt))
	for _, r := range recs {
		n := r.wireLen
		if n == 0 {
			n = len(r.data)
		}
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(1, 0), CaptureLength: len(r.data), Length: n}
		require.NoError(t, w.WritePacket(ci, r.data))
	}
	return b.Bytes()
}

// ackFrame returns frame 5 of the golden capture, an RC ACK, as an Ethernet
// frame, and its expected summary line without the frame number.
func ackFrame(t *testing.T) ([]byte, string) {
	t.Helper()
	return bytes.Clone(goldenFrames(t)[4].Data),
		" 10.99.0.2:49441 > 10.99.0.3:4791 RC_ACKNOWLEDGE dqpn=0x000011 psn=6186380 syndrome=ACK msn=1 len=0 icrc=ok"
}

// ipv6Packet builds a UD SEND over IPv6 with the layers package.
func ipv6Packet(t *testing.T) ([]byte, string) {
	t.Helper()
	ip6 := &gplayers.IPv6{Version: 6, NextHeader: gplayers.IPProtocolUDP, HopLimit: 64,
		SrcIP: net.ParseIP("fd00::1"), DstIP: net.ParseIP("fd00::2")}
	udp := &gplayers.UDP{SrcPort: 0xC000, DstPort: packet.UDPPort}
	bth := &layers.BTH{BTHFields: packet.BTHFields{Opcode: packet.UDSendOnly, PKey: 0xFFFF, DestQP: 0x11, PSN: 42}}
	deth := layers.NewExt(packet.HeaderDETH)
	packet.DETH(deth.Contents).Encode(&packet.DETHFields{QKey: 0x11111111, SrcQP: 0x12})
	require.NoError(t, udp.SetNetworkLayerForChecksum(ip6))
	require.NoError(t, bth.SetNetworkLayerForICRC(ip6, udp))
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	require.NoError(t, gopacket.SerializeLayers(buf, opts, ip6, udp, bth, deth, gopacket.Payload("hi")))
	return buf.Bytes(), " [fd00::1]:49152 > [fd00::2]:4791 UD_SEND_ONLY dqpn=0x000011 psn=42 qkey=0x11111111 srcqp=0x000012 len=2 icrc=ok"
}

func runOn(t *testing.T, capture []byte, f Format) (string, string, Stats, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	st, err := Run(&out, &errOut, bytes.NewReader(capture), f)
	return out.String(), errOut.String(), st, err
}

// TestLinkTypes dumps the same packets carried in every supported link type.
func TestLinkTypes(t *testing.T) {
	eth, ackLine := ackFrame(t)
	ip4 := eth[14:]
	ip6, v6Line := ipv6Packet(t)
	mac := eth[6:12]
	sll := append(binary.BigEndian.AppendUint16(nil, 0), 0, 1, 0, 6)
	sll = append(append(sll, mac...), 0, 0, 0x08, 0x00)
	sll = append(sll, ip4...)
	sll2 := []byte{0x08, 0x00, 0, 0, 0, 0, 0, 2, 0, 1, 0, 6}
	sll2 = append(append(sll2, mac...), 0, 0)
	sll2 = append(sll2, ip4...)
	vlan := append(append(bytes.Clone(eth[:12]), 0x81, 0x00, 0x00, 0x64), eth[12:]...)

	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(pcapOf(t, gplayers.LinkTypeEthernet, record{data: eth}))
	zw.Close()

	tests := []struct {
		name    string
		capture []byte
		want    string
	}{
		{"Ethernet", pcapOf(t, gplayers.LinkTypeEthernet, record{data: eth}), ackLine},
		{"Ethernet 802.1Q", pcapOf(t, gplayers.LinkTypeEthernet, record{data: vlan}), ackLine},
		{"Linux SLL", pcapOf(t, gplayers.LinkTypeLinuxSLL, record{data: sll}), ackLine},
		{"Linux SLL2", pcapOf(t, gplayers.LinkTypeLinuxSLL2, record{data: sll2}), ackLine},
		{"raw 101 IPv4", pcapOf(t, gplayers.LinkTypeRaw, record{data: ip4}), ackLine},
		{"raw 101 IPv6", pcapOf(t, gplayers.LinkTypeRaw, record{data: ip6}), v6Line},
		{"raw 12", pcapOf(t, 12, record{data: ip4}), ackLine},
		{"IPv4 228", pcapOf(t, gplayers.LinkTypeIPv4, record{data: ip4}), ackLine},
		{"IPv6 229", pcapOf(t, gplayers.LinkTypeIPv6, record{data: ip6}), v6Line},
		{"gzip", gz.Bytes(), ackLine},
	}
	for _, tt := range tests {
		out, errOut, st, err := runOn(t, tt.capture, FormatLine)
		want := "#1" + tt.want + "\n"
		assert.Equal(t, want, out, "%s: out %q stderr %q err %v, want %q", tt.name, out, errOut, err, want)
		assert.Equal(t, "", errOut, "%s: out %q stderr %q err %v, want %q", tt.name, out, errOut, err, want)
		assert.NoError(t, err, "%s: out %q stderr %q err %v, want %q", tt.name, out, errOut, err, want)
		assert.Equal(t, (Stats{Frames: 1, RoCE: 1}), st, "%s: stats %+v", tt.name, st)
	}
}

// TestBadFrames puts good, bad and foreign frames in one capture: foreign
// frames are skipped, bad ones reported with the frame number, and the dump
// goes on.
func TestBadFrames(t *testing.T) {
	eth, ackLine := ackFrame(t)
	arp := append(bytes.Clone(eth[:12]), 0x08, 0x06)
	arp = append(arp, make([]byte, 28)...)
	badICRC := bytes.Clone(eth)
	badICRC[len(badICRC)-1] ^= 0xFF
	badOpcode := bytes.Clone(eth)
	badOpcode[14+20+8] = 0x1F
	recs := []record{
		{data: arp},                         // 1: not RoCE
		{data: eth[:10]},                    // 2: too short for Ethernet
		{data: eth[:50], wireLen: len(eth)}, // 3: cut by the snap length
		{data: badICRC},                     // 4: printed, icrc=BAD
		{data: badOpcode},                   // 5: malformed RoCE
		{data: eth},                         // 6: fine
		{data: eth[:50]},                    // 7: shorter than its IP header says
		{data: nil},                         // 8: empty
		{data: append(bytes.Clone(eth[:14]), 0x45)}, // 9: too short for IPv4
	}
	capture := pcapOf(t, gplayers.LinkTypeEthernet, recs...)

	out, errOut, st, err := runOn(t, capture, FormatLine)
	require.NoError(t, err)
	wantOut := "#4" + strings.Replace(ackLine, "icrc=ok", "icrc=BAD", 1) + "\n#6" + ackLine + "\n"
	assert.Equal(t, wantOut, out, "stdout:\n%s\nwant:\n%s", out, wantOut)
	wantErr := []string{
		"frame 2 (10 bytes): bad Ethernet: ",
		"frame 3 (50 bytes): bad RoCE packet: frame shorter than its headers announce",
		"frame 5 (62 bytes): bad BTH: unknown opcode",
		"frame 7 (50 bytes): bad RoCE packet: frame shorter than its headers announce",
		"frame 8 (0 bytes): bad Ethernet: frame shorter than its headers announce",
		"frame 9 (15 bytes): bad IPv4: ",
	}
	lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
	require.Len(t, lines, len(wantErr), "stderr:\n%s\nwant %d lines", errOut, len(wantErr))
	for i, w := range wantErr {
		assert.True(t, strings.HasPrefix(lines[i], w), "stderr line %d: %q, want prefix %q", i+1, lines[i], w)
	}
	want := (Stats{Frames: 9, RoCE: 2, Bad: 6, BadICRC: 1})
	assert.Equal(t, want, st, "stats %+v, want %+v", st, want)

	// The errors are typed.
	r, err := NewReader(bytes.NewReader(capture))
	require.NoError(t, err)
	d := NewDecoder()
	wantIs := []error{ErrNotRoCE, nil, ErrFrameTruncated, nil, packet.ErrUnknownOpcode, nil, ErrFrameTruncated, ErrFrameTruncated, nil}
	for i, w := range wantIs {
		f, err := r.Next()
		require.NoError(t, err)
		p, err := d.Decode(f)
		var fe *FrameError
		switch {
		case i == 3 && (err != nil || !errors.Is(p.ICRCErr, packet.ErrBadICRC)):
			assert.Fail(t, fmt.Sprintf("frame 4: %v, ICRC %v; want ErrBadICRC", err, p.ICRCErr))
		case w != nil && !errors.Is(err, w):
			assert.Fail(t, fmt.Sprintf("frame %d: %v, want %v", i+1, err, w))
		case w != ErrNotRoCE && err != nil && (!errors.As(err, &fe) || fe.Frame != i+1):
			assert.Fail(t, fmt.Sprintf("frame %d: %v is not a *FrameError for it", i+1, err))
		}
	}
}

func TestUnsupportedLinkTypeReportedOnce(t *testing.T) {
	eth, _ := ackFrame(t)
	_, errOut, st, err := runOn(t, pcapOf(t, gplayers.LinkTypeIEEE802_11, record{data: eth}, record{data: eth}), FormatLine)
	assert.NoError(t, err, "stderr %q, stats %+v, err %v; want one report", errOut, st, err)
	assert.Equal(t, 1, strings.Count(errOut, "unsupported link type"), "stderr %q, stats %+v, err %v; want one report", errOut, st, err)
	assert.Equal(t, 2, st.Bad, "stderr %q, stats %+v, err %v; want one report", errOut, st, err)
}

func TestCaptureErrors(t *testing.T) {
	golden := readFile(t, goldenPcapng)
	eth, _ := ackFrame(t)
	pcap := pcapOf(t, gplayers.LinkTypeEthernet, record{data: eth}, record{data: eth})
	tests := []struct {
		name   string
		in     []byte
		want   error
		frames int
	}{
		{"empty file", nil, ErrNotCapture, 0},
		{"text", []byte("this is not a capture\n"), ErrNotCapture, 0},
		{"short", []byte{1, 2}, ErrNotCapture, 0},
		{"pcap header cut", pcap[:10], ErrTruncatedCapture, 0},
		{"pcapng header cut", golden[:20], ErrTruncatedCapture, 0},
		{"pcap record cut", pcap[:len(pcap)-5], ErrTruncatedCapture, 1},
		{"pcapng block cut", golden[:100000], ErrTruncatedCapture, 108},
	}
	for _, tt := range tests {
		out, _, st, err := runOn(t, tt.in, FormatLine)
		assert.ErrorIs(t, err, tt.want, "%s: %v, want %v", tt.name, err, tt.want)
		assert.Equal(t, tt.frames, st.Frames, "%s: %d frames, %d lines printed before the error, want %d", tt.name, st.Frames, strings.Count(out, "\n"), tt.frames)
		assert.Equal(t, tt.frames, strings.Count(out, "\n"), "%s: %d frames, %d lines printed before the error, want %d", tt.name, st.Frames, strings.Count(out, "\n"), tt.frames)
	}
}
