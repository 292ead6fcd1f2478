package tool

import (
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm"
	"github.com/gorxe/gorxe/cm/mad"
	"github.com/gorxe/gorxe/cm/rdmacm"
	"github.com/gorxe/gorxe/dump"
	"github.com/gorxe/gorxe/internal/devselect"
	"github.com/gorxe/gorxe/netio"
)

// readPcap returns the frames of the capture at path; it fails on a file that does not end
// cleanly after its last frame.
func readPcap(t *testing.T, path string) (frames []dump.Frame, ports []uint16) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r, err := dump.NewReader(f)
	require.NoError(t, err)
	for {
		fr, err := r.Next()
		if err == io.EOF {
			return frames, r.Ports()
		}
		require.NoError(t, err, "frame %d", len(frames)+1)
		frames = append(frames, fr)
	}
}

// TestPcapFile: the --pcap tap shows each datagram to the tap it extends and writes it to the
// file, which holds them all, with the port recorded, once closed.
func TestPcapFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.pcapng")
	var seen int
	cfg := gorxe.Config{Addr: netip.MustParseAddr("127.0.0.1"), Port: 14791,
		Tap: func(netio.Direction, *netio.Message) { seen++ }}
	p, err := createPcap(path, cfg)
	require.NoError(t, err)
	tap := p.tap(cfg.Tap)
	src, dst := netip.MustParseAddrPort("127.0.0.1:49152"), netip.MustParseAddrPort("127.0.0.2:14791")
	for _, payload := range []string{"one", "two"} {
		tap(netio.Sent, &netio.Message{Src: src, Dst: dst, Buf: []byte(payload)})
	}
	assert.Equal(t, 2, seen, "the tap it extends")
	require.NoError(t, p.close())
	frames, ports := readPcap(t, path)
	require.Len(t, frames, 2)
	assert.Equal(t, []int{1, 2}, []int{frames[0].Index, frames[1].Index})
	assert.Equal(t, []uint16{14791}, ports)

	_, err = createPcap(filepath.Join(t.TempDir(), "no", "such", "dir"), cfg)
	require.ErrorContains(t, err, "capture: ")
	require.NoError(t, (*pcapFile)(nil).close(), "no --pcap")
}

// TestSessionClosesCapture: the session owns the --pcap file and closes it after the device, so
// the file holds every datagram the device sent and received. The device dials itself: its REQ
// goes out and comes back, and the REJ (nobody listens) goes out and comes back.
func TestSessionClosesCapture(t *testing.T) {
	held, err := net.ListenPacket("udp4", "127.0.0.1:0")
	require.NoError(t, err)
	port := held.LocalAddr().(*net.UDPAddr).Port
	require.NoError(t, held.Close())
	t.Setenv(devselect.EnvPort, strconv.Itoa(port))
	t.Setenv(devselect.EnvPcap, "")
	t.Setenv(netio.EnvFaults, "")

	path := filepath.Join(t.TempDir(), "s.pcapng")
	c := NewCommon()
	c.Bind, c.Pcap = "127.0.0.1", path
	s, err := c.OpenCM(devselect.Selection{}, io.Discard, io.Discard)
	require.NoError(t, err)
	_, err = rdmacm.Dial(t.Context(), s.Dev, netip.MustParseAddrPort("127.0.0.1:7174"), nil)
	var rej *cm.RejectError
	require.ErrorAs(t, err, &rej)
	require.Equal(t, mad.RejInvalidServiceID, rej.Reason)
	require.NoError(t, s.Close())

	frames, ports := readPcap(t, path)
	assert.Len(t, frames, 4, "REQ and REJ, each sent and received")
	assert.Equal(t, []uint16{uint16(port)}, ports)
}
