package trace

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGoldenCaptureSVG draws the kernel rxe capture and reads the SVG back as XML: every
// packet is an arrow or part of a band, and the counts are those worked out from Wireshark's
// decoding of the same packets (runs of four or more MIDDLE packets of one sender, back to
// back: 26 runs of 933 packets).
func TestGoldenCaptureSVG(t *testing.T) {
	d := buildFile(t, goldenCapture, defaults(), false)
	s := svgOf(t, d)

	require.Len(t, d.Packets, 2540)
	assert.Equal(t, 2540-933, s.count("g", "pkt"), "packet arrows")
	assert.Equal(t, 26, s.count("g", "band"), "bands")
	assert.Equal(t, 2540-933+26, s.count("text", "label")-s.count("g", "gap"), "labels of arrows and bands")
	assert.Equal(t, 15, s.count("g", "gap"), "breaks: the pauses between tool runs and in the RDMA-CM exchange")
	assert.Equal(t, 0, s.count("g", "loss"), "the capture leaves packets out (thinned bursts) but never fills the holes")
	assert.Len(t, s.lanes, 52)
	assert.Equal(t, []string{"10.99.0.3 QP 0x000011", "10.99.0.2 QP 0x000011", "10.99.0.3 QP 0x000012", "10.99.0.2 QP 0x000012"}, s.lanes[:4])
	assert.Equal(t, "10.99.0.3 QP 0x000001", s.lanes[48], "RDMA-CM's MADs go between the GSI QPs")
	assert.Equal(t, "2540 packets, 52 endpoints: 3 retransmissions, 2 duplicates, 0 losses, 0 NAKs, 0 RNR NAKs", d.Summary())
}

// TestGoldenCaptureLabels checks the exact text and colour class of known packets of the kernel
// capture, including the retransmission and the repeated ACKs of the RC pingpong (frames
// 126-135: the responder's SEND_FIRST 6146219 went out again after 6146221).
func TestGoldenCaptureLabels(t *testing.T) {
	s := svgOf(t, buildFile(t, goldenCapture, defaults(), false))
	for _, tc := range []struct {
		frame        int
		label, class string
	}{
		{1, "RC_SEND_FIRST psn=6186377 len=1024", "pkt req"},
		{5, "RC_ACKNOWLEDGE psn=6186380 len=0 ACK", "pkt ack"},
		{126, "RC_SEND_FIRST psn=6146219 len=1024", "pkt req"},
		{129, "RC_SEND_FIRST psn=6146219 len=1024 [retransmission]", "pkt req retx"},
		{131, "RC_SEND_MIDDLE psn=6146220 len=1024 [retransmission]", "pkt req retx"},
		{133, "RC_SEND_LAST psn=6146222 len=1024", "pkt req"},
		{134, "RC_ACKNOWLEDGE psn=6146221 len=0 ACK [duplicate]", "pkt ack dup"},
		{136, "RC_ACKNOWLEDGE psn=6146222 len=0 ACK", "pkt ack"},
		{207, "UC_SEND_ONLY psn=16557771 len=1024", "pkt req"},
		{247, "UD_SEND_ONLY psn=5728949 len=1024", "pkt req"},
		{1511, "RC_RDMA_READ_REQUEST psn=10542055 dmalen=65536", "pkt req"},
		{1512, "RC_RDMA_READ_RESPONSE_FIRST psn=10542055 len=1024 ACK", "pkt resp"},
		{1911, "RC_FETCH_ADD psn=8659749 len=0", "pkt req"},
		{1961, "RC_ATOMIC_ACKNOWLEDGE psn=8659749 len=0 ACK", "pkt ack"},
	} {
		p := s.pkts[tc.frame]
		require.NotNil(t, p, "frame %d has no arrow", tc.frame)
		assert.Equal(t, tc.label, p.label(), "frame %d", tc.frame)
		assert.Equal(t, tc.class, s.class[tc.frame], "frame %d", tc.frame)
	}
}
