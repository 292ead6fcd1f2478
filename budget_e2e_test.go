package gorxe

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/clock"
	"github.com/gorxe/gorxe/netio"
)

// TestE2EManyQPsShareInflightBound runs more RC QPs than the device's in-flight bound lets send
// their whole windows at once (64 QPs × 128 PSNs at MTU 256 against 4096 packets): the QPs held
// back must be admitted as acknowledgements make room, and one destroyed while others wait must
// give its share back, so every WRITE completes with its data. The fabric's queues hold the
// whole bound: with its fake clock standing still, a drop would never be retransmitted.
func TestE2EManyQPsShareInflightBound(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	fab := netio.NewFabric(netio.FabricConfig{Clock: clk, QueueLen: 1 << 14})
	t.Cleanup(fab.Close)
	f := &testFabric{fab: fab, clk: clk}
	a, b := newNode(t, f.open(t, "10.0.0.1")), newNode(t, f.open(t, "10.0.0.2"))
	const qps, size, perQP = 64, 16 << 10, 4
	senders := make([]*QP, qps)
	for i := range senders {
		senders[i], _ = rcPair(t, a, b, MTU256)
	}
	for i := range a.buf[:qps*size] {
		a.buf[i] = byte(i*7 + i>>8)
	}
	for i, q := range senders {
		wrs := make([]SendWR, perQP)
		for k := range wrs {
			wrs[k] = SendWR{ID: uint64(i*perQP + k), Opcode: WRRDMAWrite, Flags: SendSignaled, SGList: a.sge(i*size, size),
				RDMA: RDMAInfo{RemoteAddr: b.mr.Addr() + uint64(i*size), RKey: b.mr.RKey()}}
		}
		require.NoError(t, q.PostSend(wrs))
	}
	wcs := a.wait(t, qps*perQP)
	seen := make(map[uint64]bool)
	for _, wc := range wcs {
		require.Equal(t, WCSuccess, wc.Status, "completion %+v", wc)
		seen[wc.WRID] = true
	}
	assert.Len(t, seen, qps*perQP)
	assert.Equal(t, a.buf[:qps*size], b.buf[:qps*size], "RDMA WRITE data differs")

	// Destroying a QP while the rest have work queued hands its charge back. Each QP writes its
	// own region again: WRITEs from different QPs to the same bytes are unordered (IBTA leaves
	// their result undefined), and the responder's workers would race on them.
	require.NoError(t, senders[0].PostSend([]SendWR{{ID: 1000, Opcode: WRRDMAWrite, SGList: a.sge(0, size),
		RDMA: RDMAInfo{RemoteAddr: b.mr.Addr(), RKey: b.mr.RKey()}}}))
	require.NoError(t, senders[0].Destroy())
	for i, q := range senders[1:] {
		off := (i + 1) * size
		require.NoError(t, q.PostSend([]SendWR{{ID: uint64(2000 + i), Opcode: WRRDMAWrite, Flags: SendSignaled, SGList: a.sge(off, size),
			RDMA: RDMAInfo{RemoteAddr: b.mr.Addr() + uint64(off), RKey: b.mr.RKey()}}}))
	}
	for _, wc := range a.wait(t, qps-1) {
		require.Equal(t, WCSuccess, wc.Status, "completion %+v", wc)
	}
}
