package capture_test

import (
	"bytes"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/capture"
	"github.com/gorxe/gorxe/dump"
	"github.com/gorxe/gorxe/netio"
	"github.com/gorxe/gorxe/packet"
)

// rocePacket builds a SEND_ONLY to dqpn with payload, ICRC computed for the framing of src→dst.
func rocePacket(t *testing.T, src, dst netip.AddrPort, dqpn uint32, psn packet.PSN, payload []byte) []byte {
	t.Helper()
	h := packet.Headers{BTH: packet.BTHFields{Opcode: packet.RCSendOnly, PKey: 0xFFFF, DestQP: dqpn, PSN: psn}}
	buf, room, err := packet.AppendPacketRoom(nil, &h, len(payload))
	require.NoError(t, err)
	copy(room, payload)
	env := packet.Envelope{Src: src, Dst: dst}
	if src.Addr().Unmap().Is4() {
		env.IPFlags = packet.IPv4DontFragment
	}
	require.NoError(t, env.PutICRC(buf))
	return buf
}

func TestWriterRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name     string
		a, b     string
		port     uint16
		wantPort uint16
	}{
		{"ipv4 default port", "10.0.0.1", "10.0.0.2", 0, 4791},
		{"ipv6 other port", "fd00::1", "fd00::2", 14791, 14791},
	} {
		t.Run(tc.name, func(t *testing.T) {
			port := tc.wantPort
			a := netip.AddrPortFrom(netip.MustParseAddr(tc.a), 49152)
			b := netip.AddrPortFrom(netip.MustParseAddr(tc.b), port)
			aBack := netip.AddrPortFrom(a.Addr(), port)
			bFrom := netip.AddrPortFrom(b.Addr(), 50000)
			start := time.Unix(1700000000, 0)
			tick := 0
			var out bytes.Buffer
			w, err := capture.NewWriter(&out, capture.Options{Port: tc.port, Interface: "dev0", Now: func() time.Time {
				tick++
				return start.Add(time.Duration(tick) * time.Millisecond)
			}})
			require.NoError(t, err)

			w.Tap(netio.Sent, &netio.Message{Src: a, Dst: b, Buf: rocePacket(t, a, b, 0x11, 1, []byte("one"))})
			w.Tap(netio.Lost, &netio.Message{Src: a, Dst: b, Buf: rocePacket(t, a, b, 0x11, 2, []byte("two"))})
			w.Tap(netio.Sent|netio.Duplicate, &netio.Message{Src: a, Dst: b, Buf: rocePacket(t, a, b, 0x11, 3, []byte("three"))})
			w.Tap(netio.Received, &netio.Message{Src: bFrom, Dst: aBack, Buf: rocePacket(t, bFrom, aBack, 0x22, 9, []byte("back"))})
			require.NoError(t, w.Close())
			assert.Equal(t, 4, w.Packets())

			// pcapng structure: the interface comment names the port, direction flags and comments.
			r, err := pcapgo.NewNgReader(bytes.NewReader(out.Bytes()), pcapgo.DefaultNgReaderOptions)
			require.NoError(t, err)
			intf, err := r.Interface(0)
			require.NoError(t, err)
			assert.Equal(t, []uint16{tc.wantPort}, capture.CommentPorts(intf.Comment), "interface comment %q", intf.Comment)
			assert.Equal(t, "dev0", intf.Name)
			var comments [][]string
			var dirs []pcapgo.NgEpbFlag
			var stamps []time.Time
			for {
				_, ci, opts, err := r.ReadPacketDataWithOptions()
				if err == io.EOF {
					break
				}
				require.NoError(t, err)
				comments = append(comments, opts.Comments)
				require.NotNil(t, opts.Flags)
				dirs = append(dirs, opts.Flags.Direction)
				stamps = append(stamps, ci.Timestamp)
			}
			assert.Equal(t, [][]string{nil, {"gorxe: lost (dropped by fault injection; never reached the network)"}, {"gorxe: sent (duplicate)"}, nil}, comments)
			out1, in := pcapgo.NgEpbFlagDirectionOutbound, pcapgo.NgEpbFlagDirectionInbound
			assert.Equal(t, []pcapgo.NgEpbFlag{out1, out1, out1, in}, dirs)
			assert.True(t, stamps[0].Equal(start.Add(time.Millisecond)), "first stamp %v", stamps[0])

			// gorxe dump decodes every packet on the port the capture records, with a valid ICRC.
			dr, err := dump.NewReader(bytes.NewReader(out.Bytes()))
			require.NoError(t, err)
			dec := dump.NewDecoder()
			var psns []packet.PSN
			for {
				f, err := dr.Next()
				if err == io.EOF {
					break
				}
				require.NoError(t, err)
				for _, port := range dr.Ports() {
					dec.AddPort(port)
				}
				p, err := dec.Decode(f)
				require.NoError(t, err)
				require.NoError(t, p.ICRCErr)
				psns = append(psns, p.BTH.PSN)
			}
			assert.Equal(t, []packet.PSN{1, 2, 3, 9}, psns)
		})
	}
}

// TestTsharkReadsCapture has Wireshark's own decoder read a written capture, where tshark is
// installed: every frame is RoCEv2 (InfiniBand over UDP) and none is malformed.
func TestTsharkReadsCapture(t *testing.T) {
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark is not installed")
	}
	for _, tc := range []struct{ a, b string }{{"10.0.0.1", "10.0.0.2"}, {"fd00::1", "fd00::2"}} {
		a := netip.AddrPortFrom(netip.MustParseAddr(tc.a), 49152)
		b := netip.AddrPortFrom(netip.MustParseAddr(tc.b), packet.UDPPort)
		path := filepath.Join(t.TempDir(), "c.pcapng")
		f, err := os.Create(path)
		require.NoError(t, err)
		w, err := capture.NewWriter(f, capture.Options{})
		require.NoError(t, err)
		for i := range 5 {
			w.Tap(netio.Sent, &netio.Message{Src: a, Dst: b, Buf: rocePacket(t, a, b, 0x11, packet.PSN(i), []byte("payload"))})
		}
		require.NoError(t, w.Close())
		require.NoError(t, f.Close())
		args := append(payloadHeuristicsOff(t, tshark), "-r", path, "-T", "fields", "-e", "frame.protocols", "-e", "_ws.malformed", "-e", "_ws.expert.message")
		out, err := exec.Command(tshark, args...).Output()
		require.NoError(t, err, "%s", out)
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		require.Len(t, lines, 5, "%s", out)
		for _, l := range lines {
			assert.Contains(t, l, "infiniband", "frame not decoded as RoCE: %s", l)
			assert.NotContains(t, strings.ToLower(l), "malformed", l)
		}
	}
}

// payloadHeuristicsOff returns tshark options that stop it guessing an upper protocol (RPC over
// RDMA, SMB Direct, ...) from the test's arbitrary message payloads, which would then be
// "malformed" instances of protocols they never were.
func payloadHeuristicsOff(t *testing.T, tshark string) []string {
	out, err := exec.Command(tshark, "-G", "heuristic-decodes").Output()
	require.NoError(t, err)
	var args []string
	for line := range strings.SplitSeq(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == "infiniband.payload" && f[2] == "T" && f[1] != "ethertype" {
			args = append(args, "--disable-protocol", f[1])
		}
	}
	return args
}

// TestReceivedIPv4IDRecovered: a received datagram whose ICRC was computed for a non-zero IPv4
// ID (a segment of a GSO send, or kernel rxe's counter) is framed with that ID, so its ICRC
// verifies in the capture.
func TestReceivedIPv4IDRecovered(t *testing.T) {
	src := netip.MustParseAddrPort("10.0.0.2:50000")
	dst := netip.MustParseAddrPort("10.0.0.1:4791")
	pkt := rocePacket(t, src, dst, 0x11, 5, []byte("segment"))
	packet.AdjustICRCIPv4ID(pkt, 0, 7)
	var out bytes.Buffer
	w, err := capture.NewWriter(&out, capture.Options{})
	require.NoError(t, err)
	w.Tap(netio.Received, &netio.Message{Src: src, Dst: dst, Buf: pkt})
	require.NoError(t, w.Close())
	dr, err := dump.NewReader(bytes.NewReader(out.Bytes()))
	require.NoError(t, err)
	f, err := dr.Next()
	require.NoError(t, err)
	p, err := dump.NewDecoder().Decode(f)
	require.NoError(t, err)
	assert.NoError(t, p.ICRCErr)
	assert.Equal(t, uint16(7), p.IPv4.Id)
}
