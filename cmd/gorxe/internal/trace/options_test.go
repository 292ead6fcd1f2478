package trace

import (
	"bytes"
	"compress/gzip"
	"errors"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
	"github.com/gorxe/gorxe/dump"
	"github.com/gorxe/gorxe/packet"
)

func TestParseArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want Options
		err  error
	}{
		{[]string{"c.pcap"}, Options{Input: "c.pcap", Gap: DefaultGap, Collapse: DefaultCollapse}, nil},
		{[]string{"c.pcap", "-o", "out.html", "-qp", "0x11"},
			Options{Input: "c.pcap", Output: "out.html", Format: FormatHTML, QPN: 0x11, HasQPN: true, Gap: DefaultGap, Collapse: DefaultCollapse}, nil},
		{[]string{"-port", "4791", "c.pcapng", "-o", "x.SVG", "-gap", "1s", "-collapse", "0"},
			Options{Input: "c.pcapng", Output: "x.SVG", Port: 4791, HasPort: true, Gap: time.Second}, nil},
		{[]string{"-qp", "17", "c.pcap"}, Options{Input: "c.pcap", QPN: 17, HasQPN: true, Gap: DefaultGap, Collapse: DefaultCollapse}, nil},
		{[]string{"c.pcap", "-o", "out.png"}, Options{}, ErrOutputFormat},
		{[]string{}, Options{}, ErrUsage},
		{[]string{"a.pcap", "b.pcap"}, Options{}, ErrUsage},
		{[]string{"-qp", "0x1000000", "c.pcap"}, Options{}, ErrUsage},
		{[]string{"-port", "70000", "c.pcap"}, Options{}, ErrUsage},
		{[]string{"-gap", "0s", "c.pcap"}, Options{}, ErrUsage},
		{[]string{"-collapse", "-1", "c.pcap"}, Options{}, ErrUsage},
		{[]string{"-bogus", "c.pcap"}, Options{}, ErrUsage},
		{[]string{"-frames", "100-400", "c.pcap"}, Options{Input: "c.pcap", FirstFrame: 100, LastFrame: 400, Gap: DefaultGap, Collapse: DefaultCollapse}, nil},
		{[]string{"-frames", "100-", "c.pcap"}, Options{Input: "c.pcap", FirstFrame: 100, Gap: DefaultGap, Collapse: DefaultCollapse}, nil},
		{[]string{"-frames", "-9", "c.pcap"}, Options{Input: "c.pcap", LastFrame: 9, Gap: DefaultGap, Collapse: DefaultCollapse}, nil},
		{[]string{"-frames", "9-1", "c.pcap"}, Options{}, ErrUsage},
		{[]string{"-frames", "0-5", "c.pcap"}, Options{}, ErrUsage},
		{[]string{"-frames", "12", "c.pcap"}, Options{}, ErrUsage},
		{[]string{"-h"}, Options{}, tool.ErrHelp},
	} {
		got, err := ParseArgs(tc.args, &bytes.Buffer{})
		if tc.err != nil {
			assert.ErrorIs(t, err, tc.err, "%q", tc.args)
			continue
		}
		require.NoError(t, err, "%q", tc.args)
		assert.Equal(t, tc.want, got, "%q", tc.args)
	}
}

// TestFilters checks -qp and -port against the kernel capture, where each tool run has its
// own QP pair and UDP port: the RC pingpong (QP 0x11, 206 packets) and the WRITE bandwidth run
// (QP 0x24, port 50448, 1084 packets).
func TestFilters(t *testing.T) {
	for _, tc := range []struct {
		name  string
		o     Options
		n     int
		lanes int
	}{
		{"qp 0x11", Options{QPN: 0x11, HasQPN: true}, 206, 2},
		{"qp 0x24", Options{QPN: 0x24, HasQPN: true}, 1084, 2},
		{"port 50448", Options{Port: 50448, HasPort: true}, 1084, 2},
		{"port 4791", Options{Port: 4791, HasPort: true}, 2540, 52},
		{"qp 0x24 and port 49441", Options{QPN: 0x24, HasQPN: true, Port: 49441, HasPort: true}, 0, 0},
	} {
		tc.o.Gap, tc.o.Collapse = DefaultGap, DefaultCollapse
		f, err := openGolden(t)
		d, err2 := Build(f, tc.o, false)
		require.NoError(t, err)
		if tc.n == 0 {
			assert.ErrorIs(t, err2, ErrNoPackets, tc.name)
			continue
		}
		require.NoError(t, err2, tc.name)
		assert.Len(t, d.Packets, tc.n, tc.name)
		assert.Len(t, d.Lanes, tc.lanes, tc.name)
	}
}

// TestFramesPage draws frames 126-136 of the kernel capture, the RC pingpong's retransmission:
// the marks come from the whole capture and the times from its first packet.
func TestFramesPage(t *testing.T) {
	o := defaults()
	o.FirstFrame, o.LastFrame = 126, 136
	f, err := openGolden(t)
	require.NoError(t, err)
	d, err := Build(f, o, false)
	require.NoError(t, err)
	s := svgOf(t, d)
	require.Len(t, s.rows, 11)
	assert.Equal(t, "pkt: RC_SEND_FIRST psn=6146219 len=1024 [retransmission]", s.rows[3])
	times := s.root.find(func(n *node) bool { return n.XMLName.Local == "text" && n.hasClass("t") })
	require.Len(t, times, 11)
	assert.Equal(t, "0.085649", times[0].Text)
}

// TestUndecodableFrames checks that a frame cut short by the snap length is left out and
// counted, and the rest drawn.
func TestUndecodableFrames(t *testing.T) {
	a, b := rcPair(1, 2)
	s := newSynth(t)
	s.req(a, b, packet.RCSendOnly, 1, 64)
	whole := bytes.Clone(s.bytes())
	s.req(a, b, packet.RCSendOnly, 2, 64)
	last := s.bytes()[len(whole)+16:] // the second record's frame, after its record header
	ci := gopacket.CaptureInfo{Timestamp: time.Unix(1_700_000_001, 0), CaptureLength: 40, Length: len(last)}
	require.NoError(t, s.w.WritePacket(ci, last[:40]))
	d, err := Build(bytes.NewReader(s.bytes()), defaults(), false)
	require.NoError(t, err)
	assert.Len(t, d.Packets, 2)
	assert.Equal(t, 1, d.Undecodable)
}

func TestCaptureErrors(t *testing.T) {
	_, err := Build(bytes.NewReader([]byte("not a capture at all")), defaults(), false)
	var ce *CaptureError
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.ErrorIs(t, err, dump.ErrNotCapture)

	a, b := rcPair(1, 2)
	s := newSynth(t)
	s.req(a, b, 0, 1, 8) // RC_SEND_FIRST
	whole := s.bytes()
	_, err = Build(bytes.NewReader(whole[:len(whole)-5]), defaults(), false)
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.ErrorIs(t, err, dump.ErrTruncatedCapture)
	assert.Equal(t, 0, ce.Frame)

	_, err = Build(bytes.NewReader(whole[:24]), defaults(), false) // the file header alone
	assert.ErrorIs(t, err, ErrNoPackets)

	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, err = zw.Write(whole)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	d, err := Build(&gz, defaults(), false)
	require.NoError(t, err, "a gzip-compressed capture")
	assert.Len(t, d.Packets, 1)
}
