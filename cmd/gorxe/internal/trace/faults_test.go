package trace

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// demoFaults is a capture gorxe wrote under fault injection (see the capture package's tests):
// 69 frames, of which fault injection dropped 8 (marked in packet comments), corrupted 4 and
// copied 2.
const demoFaults = "../../../../capture/testdata/demo-faults.pcapng.gz"

// TestInjectedLosses draws demoFaults: each of the 8 packets fault injection dropped is drawn
// where it was sent, as an arrow that stops short at a cross, and counted as a loss; the
// packets sent again in its place are retransmissions, and no PSN gap is left to guess a loss
// from.
func TestInjectedLosses(t *testing.T) {
	d := buildFile(t, demoFaults, defaults(), false)
	assert.Equal(t, "69 packets, 6 endpoints: 31 retransmissions, 3 duplicates, 8 losses, 2 NAKs, 0 RNR NAKs", d.Summary())
	svg := svgOf(t, d)
	assert.Equal(t, []string{
		"pkt: RC_SEND_FIRST psn=16001316 len=1024",
		"pkt: RC_SEND_MIDDLE psn=16001317 len=1024 BAD-ICRC",
		"pkt: RC_SEND_LAST psn=16001318 len=952",
		"gap: 24ms without packets",
		"pkt: RC_ACKNOWLEDGE psn=16001317 len=0 NAK_PSN_SEQUENCE_ERROR",
		"pkt: RC_SEND_MIDDLE psn=16001317 len=1024 [retransmission]",
		"pkt: RC_SEND_LAST psn=16001318 len=952 [retransmission]",
		"pkt: RC_ACKNOWLEDGE psn=16001318 len=0 ACK BAD-ICRC",
		"gap: 68ms without packets",
		"pkt: RC_SEND_MIDDLE psn=16001317 len=1024 [retransmission]",
		"pkt: RC_ACKNOWLEDGE psn=16001318 len=0 ACK [duplicate]",
		"pkt: RC_SEND_ONLY_WITH_IMMEDIATE psn=16001319 len=100",
		"pkt: RC_ACKNOWLEDGE psn=16001319 len=0 ACK",
		"pkt: RC_RDMA_WRITE_FIRST psn=16001320 len=1024",
		"pkt: RC_RDMA_WRITE_MIDDLE psn=16001321 len=1024",
		"pkt: RC_RDMA_WRITE_MIDDLE psn=16001322 len=1024 BAD-ICRC",
		"pkt: RC_RDMA_WRITE_MIDDLE psn=16001323 len=1024",
		"pkt: RC_ACKNOWLEDGE psn=16001322 len=0 NAK_PSN_SEQUENCE_ERROR",
		"pkt: RC_RDMA_WRITE_MIDDLE psn=16001322 len=1024 [retransmission]",
		"pkt: RC_RDMA_WRITE_MIDDLE psn=16001323 len=1024 [retransmission]",
		"pkt: RC_RDMA_WRITE_LAST psn=16001324 len=904 [lost]",
		"gap: 67ms without packets",
		"pkt: RC_RDMA_WRITE_MIDDLE psn=16001322 len=1024 [retransmission]",
		"pkt: RC_ACKNOWLEDGE psn=16001323 len=0 ACK",
		"pkt: RC_RDMA_WRITE_LAST psn=16001324 len=904 [retransmission]",
		"pkt: RC_ACKNOWLEDGE psn=16001324 len=0 ACK",
		"pkt: RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE psn=16001325 len=64",
		"pkt: RC_ACKNOWLEDGE psn=16001325 len=0 ACK",
		"pkt: RC_RDMA_READ_REQUEST psn=16001326 dmalen=10000",
		"pkt: RC_RDMA_READ_RESPONSE_FIRST psn=16001326 len=1024 ACK",
		"band: RC_RDMA_READ_RESPONSE_MIDDLE ×4 psn=16001327..16001330 len=4096",
		"pkt: RC_RDMA_READ_RESPONSE_MIDDLE psn=16001331 len=1024 [lost]",
		"pkt: RC_RDMA_READ_RESPONSE_MIDDLE psn=16001332 len=1024",
		"pkt: RC_RDMA_READ_RESPONSE_MIDDLE psn=16001333 len=1024",
		"pkt: RC_RDMA_READ_RESPONSE_MIDDLE psn=16001334 len=1024",
		"pkt: RC_RDMA_READ_RESPONSE_LAST psn=16001335 len=784 ACK",
		"pkt: RC_RDMA_READ_REQUEST psn=16001327 dmalen=8976 [retransmission]",
		"pkt: RC_RDMA_READ_RESPONSE_FIRST psn=16001327 len=1024 ACK [retransmission]",
		"pkt: RC_RDMA_READ_RESPONSE_MIDDLE psn=16001328 len=1024 [retransmission]",
		"pkt: RC_RDMA_READ_RESPONSE_MIDDLE psn=16001329 len=1024 [retransmission, lost]",
		"pkt: RC_RDMA_READ_RESPONSE_MIDDLE psn=16001330 len=1024 [retransmission]",
		"pkt: RC_RDMA_READ_RESPONSE_MIDDLE psn=16001331 len=1024 [retransmission]",
		"pkt: RC_RDMA_READ_RESPONSE_MIDDLE psn=16001332 len=1024 [retransmission]",
		"pkt: RC_RDMA_READ_RESPONSE_MIDDLE psn=16001333 len=1024 [retransmission, lost]",
		"pkt: RC_RDMA_READ_RESPONSE_MIDDLE psn=16001334 len=1024 [retransmission]",
		"pkt: RC_RDMA_READ_RESPONSE_LAST psn=16001335 len=784 ACK [retransmission]",
		"pkt: RC_RDMA_READ_REQUEST psn=16001329 dmalen=6928 [retransmission]",
		"pkt: RC_RDMA_READ_RESPONSE_FIRST psn=16001329 len=1024 ACK [retransmission]",
		"pkt: RC_RDMA_READ_RESPONSE_MIDDLE psn=16001330 len=1024 [retransmission]",
		"pkt: RC_RDMA_READ_RESPONSE_MIDDLE psn=16001330 len=1024 [duplicate]",
		"pkt: RC_RDMA_READ_RESPONSE_MIDDLE psn=16001331 len=1024 [retransmission]",
		"pkt: RC_RDMA_READ_RESPONSE_MIDDLE psn=16001332 len=1024 [retransmission]",
		"pkt: RC_RDMA_READ_RESPONSE_MIDDLE psn=16001333 len=1024 [retransmission]",
		"pkt: RC_RDMA_READ_RESPONSE_MIDDLE psn=16001334 len=1024 [retransmission]",
		"pkt: RC_RDMA_READ_RESPONSE_LAST psn=16001335 len=784 ACK [retransmission, lost]",
		"gap: 67ms without packets",
		"pkt: RC_RDMA_READ_REQUEST psn=16001335 dmalen=784 [retransmission, lost]",
		"gap: 135ms without packets",
		"pkt: RC_RDMA_READ_REQUEST psn=16001335 dmalen=784 [retransmission]",
		"pkt: RC_RDMA_READ_RESPONSE_ONLY psn=16001335 len=784 ACK [retransmission]",
		"pkt: RC_COMPARE_SWAP psn=16001336 len=0",
		"pkt: RC_ATOMIC_ACKNOWLEDGE psn=16001336 len=0 ACK [lost]",
		"gap: 67ms without packets",
		"pkt: RC_COMPARE_SWAP psn=16001336 len=0 [retransmission]",
		"pkt: RC_ATOMIC_ACKNOWLEDGE psn=16001336 len=0 ACK [retransmission]",
		"pkt: RC_FETCH_ADD psn=16001337 len=0 [lost]",
		"gap: 67ms without packets",
		"pkt: RC_FETCH_ADD psn=16001337 len=0 [retransmission]",
		"pkt: RC_ATOMIC_ACKNOWLEDGE psn=16001337 len=0 ACK",
		"pkt: UC_RDMA_WRITE_FIRST psn=2571082 len=1024",
		"pkt: UC_RDMA_WRITE_LAST_WITH_IMMEDIATE psn=2571083 len=976",
		"pkt: UD_SEND_ONLY psn=16003004 len=512",
		"pkt: UD_SEND_ONLY psn=16003004 len=512 [duplicate]",
	}, svg.rows)

	var lost []int
	for frame, class := range svg.class {
		if slices.Contains(strings.Fields(class), "lost") {
			lost = append(lost, frame)
		}
	}
	slices.Sort(lost)
	assert.Equal(t, []int{19, 32, 40, 44, 55, 56, 60, 63}, lost)
	assert.Equal(t, "pkt req lost", svg.class[63])
	assert.Equal(t, "pkt resp retx lost", svg.class[55])

	// The dropped FETCH_ADD's arrow has no head and ends at a cross; its resend arrives.
	arrow := func(frame int) *node {
		a := svg.pkts[frame].find(func(n *node) bool { return n.XMLName.Local == "line" && n.hasClass("arrow") })
		require.Len(t, a, 1, "frame %d", frame)
		return a[0]
	}
	cross := func(frame int) []*node {
		return svg.pkts[frame].find(func(n *node) bool { return n.XMLName.Local == "text" && n.hasClass("x") && n.Text == "✕" })
	}
	assert.Empty(t, arrow(63).attr("marker-end"))
	assert.Len(t, cross(63), 1)
	assert.Equal(t, "url(#head-req)", arrow(64).attr("marker-end"))
	assert.Empty(t, cross(64))
	x := func(n *node, attr string) float64 {
		v, err := strconv.ParseFloat(n.attr(attr), 64)
		require.NoError(t, err)
		return v
	}
	from, to := x(arrow(64), "x1"), x(arrow(64), "x2")
	assert.Equal(t, from, x(arrow(63), "x1"))
	assert.InDelta(t, from+(to-from)*0.55, x(arrow(63), "x2"), 0.01, "the lost arrow stops short of B's lane")
}
