package transport

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/qp"
)

// A responder that takes longer to work through a window of packets than the requester's ACK
// timeout (kernel rxe in an emulated machine is one) must not be driven into a retransmission
// storm: every go-back-N round would add a window of duplicates to its backlog, the ACKs would
// fall ever further behind the timer, and retry_cnt would run out although the peer is alive.
func TestSlowResponderUnderLoss(t *testing.T) {
	h := newHarness(t)
	h.seed(5)
	h.faults = hFaults{Loss: 0.02}
	a, b := h.pair(hQPOptions{mtu: qp.MTU1024, timeout: 14}) // 67 ms, retry_cnt 7, as perftest uses
	b.d.service = 1 * time.Millisecond                       // 1000 packets/s
	const msgs, size = 40, 64 << 10
	src := a.d.region(size, 1)
	dst := b.d.region(size, 0)
	for i := range msgs {
		b.postRecv(uint64(i), dst.sge(0, size))
		a.post(qp.SendWR{ID: uint64(i), Opcode: qp.WRSend, Flags: qp.SendSignaled, SGList: []mr.SGE{src.sge(0, size)}})
	}
	h.runUntil(func() bool { return a.scq.Len() == msgs }, 10*time.Minute)
	wcs := make([]cq.WC, msgs)
	n := a.scq.Poll(wcs)
	for _, wc := range wcs[:n] {
		require.Equal(t, cq.WCSuccess, wc.Status, "send %d after %v of fake time; network %+v", wc.WRID, h.now.Sub(hStart), h.stats)
	}
	require.Equal(t, msgs, n, "sends completed")
	t.Logf("%d x %d KiB in %v of fake time; network %+v", msgs, size>>10, h.now.Sub(hStart).Round(time.Millisecond), h.stats)
}
