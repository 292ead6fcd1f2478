package gorxe

import (
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/clock"
	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/netio"
)

// TestE2ELossyFabric sends many RC messages over a fabric that loses, reorders and duplicates
// datagrams (faults applied by each device, as GORXE_FAULTS would), on the real clock (of a synctest
// bubble) with a short ACK timeout: every message must arrive once, in order, and intact.
func TestE2ELossyFabric(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fab := netio.NewFabric(netio.FabricConfig{})
		defer fab.Close()
		open := func(addr string, seed uint64) *Device {
			d, err := Open(Config{Addr: netip.MustParseAddr(addr), Network: fab.Network(), Workers: 2,
				Faults: FaultConfig{Loss: 0.1, Reorder: 0.05, Dup: 0.05, Seed: seed}})
			require.NoError(t, err)
			t.Cleanup(func() { d.Close() })
			return d
		}
		a, b := newNode(t, open("10.0.0.1", 1)), newNode(t, open("10.0.0.2", 2))
		qa, qb := a.qp(t, QPTypeRC), b.qp(t, QPTypeRC)
		for _, p := range []struct {
			q    *QP
			peer *node
			dqpn uint32
		}{{qa, b, qb.QPN()}, {qb, a, qa.QPN()}} {
			// 4.096 µs × 2^8 ≈ 1 ms between retransmissions.
			connectRCTimeout(t, p.q, p.peer.gid, p.dqpn, 0, 0, MTU1024, 8)
		}
		const msgs, size = 40, 3000
		for i := range msgs {
			require.NoError(t, qb.PostRecv([]RecvWR{{ID: uint64(i), SGList: b.sge(i*size, size)}}))
		}
		for i := range msgs {
			for j := range size {
				a.buf[i*size+j] = byte(i + j)
			}
			require.NoError(t, qa.PostSend([]SendWR{{ID: uint64(i), Opcode: WRSend, Flags: SendSignaled, SGList: a.sge(i*size, size)}}))
		}
		for i, wc := range a.wait(t, msgs) {
			require.Equal(t, WCSuccess, wc.Status, "send completion %d: %+v", i, wc)
			require.Equal(t, uint64(i), wc.WRID, "send completion %d: %+v", i, wc)
		}
		for i, wc := range b.wait(t, msgs) {
			require.Equal(t, WCSuccess, wc.Status, "receive completion %d: %+v", i, wc)
			require.Equal(t, uint64(i), wc.WRID, "receive completion %d: %+v", i, wc)
			require.Equal(t, uint32(size), wc.ByteLen, "receive completion %d: %+v", i, wc)
		}
		assert.Equal(t, b.buf[:msgs*size], a.buf[:msgs*size], "data differs after a lossy transfer")
		ca, cb := a.d.Counters(), b.d.Counters()
		assert.False(t, ca.Get(counter.CompleterRetryErr) == 0 && cb.Get(counter.DuplicateRequest) == 0 && cb.Get(counter.OutOfSeqRequest) == 0, "no retransmission, duplicate or out-of-sequence packet counted: %+v / %+v", ca, cb)
	})
}

// TestE2ERetryExceeded connects to a peer that never answers: after the initial send and
// RetryCnt retransmissions, each one local ACK timeout apart on the fake clock, the send completes
// with WCRetryExcErr and the rest of the queue is flushed.
func TestE2ERetryExceeded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newTestFabric(t)
		a := newNode(t, f.open(t, "10.0.0.1"))
		q := a.qp(t, QPTypeRC)
		connectRC(t, q, GIDFromAddr(mustAddr("10.0.0.99")), 123, 0, 0, MTU1024)
		require.NoError(t, q.PostSend([]SendWR{
			{ID: 1, Opcode: WRSend, Flags: SendSignaled, SGList: a.sge(0, 10)},
			{ID: 2, Opcode: WRSend, Flags: SendSignaled, SGList: a.sge(0, 10)},
		}))
		start := f.clk.Now()
		timeout := 4096 * time.Nanosecond << 14
		var due time.Duration // the timeout backs off to 2 T, then 4 T, without progress
		for i := 1; i <= 8; i++ {
			due += timeout << min(i-1, 2)
			at := waitAnyTimer(t, f.clk)
			require.False(t, i <= 7 && at.Sub(start) > due+time.Millisecond, "timer %d at %v, want about %v", i, at.Sub(start), due)
			f.clk.AdvanceTo(at)
			if a.cq.cq.Len() > 0 {
				break
			}
		}
		wcs := a.wait(t, 2)
		assert.False(t, wcs[0].Status != WCRetryExcErr || wcs[0].WRID != 1 || wcs[1].Status != WCWRFlushErr || wcs[1].WRID != 2, "completions %+v", wcs)
		assert.Equal(t, QPStateErr, q.State(), "state %v", q.State())
		c := a.d.Counters()
		assert.Equal(t, uint64(1), c.Get(counter.RetryExceededErr), "retry_exceeded_err %d (want 1), completer_retry_err %d (want 7)", c.Get(counter.RetryExceededErr), c.Get(counter.CompleterRetryErr))
		assert.Equal(t, uint64(7), c.Get(counter.CompleterRetryErr), "retry_exceeded_err %d (want 1), completer_retry_err %d (want 7)", c.Get(counter.RetryExceededErr), c.Get(counter.CompleterRetryErr))
	})
}

// waitAnyTimer waits until the test's goroutines have done what they can without the fake clock
// stepping and returns the deadline of the first timer they armed on it.
func waitAnyTimer(t *testing.T, clk *clock.Fake) time.Time {
	t.Helper()
	synctest.Wait()
	at, ok := clk.NextDeadline()
	require.True(t, ok, "no timer armed")
	return at
}

// TestE2ECloseFlushesSends closes a device with sends in flight to an absent peer: every one
// completes with WCWRFlushErr, signaled or not, and no goroutine is left (TestMain checks).
func TestE2ECloseFlushesSends(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newTestFabric(t)
		d := f.open(t, "10.0.0.1")
		a := newNode(t, d)
		q := a.qp(t, QPTypeRC)
		connectRC(t, q, GIDFromAddr(mustAddr("10.0.0.99")), 123, 0, 0, MTU1024)
		for i := range 5 {
			require.NoError(t, q.PostSend([]SendWR{{ID: uint64(i), Opcode: WRSend, Flags: SendSignaled, SGList: a.sge(0, 100)}}))
		}
		require.NoError(t, d.Close())
		wcs := make([]WC, 16)
		n := a.cq.Poll(wcs)
		require.Equal(t, 5, n, "%d completions after Close, want 5", n)
		for i, wc := range wcs[:n] {
			assert.Equal(t, WCWRFlushErr, wc.Status, "completion %d: %+v", i, wc)
			assert.Equal(t, uint64(i), wc.WRID, "completion %d: %+v", i, wc)
		}
	})
}

// TestE2ERNRAndRemoteAccessError: a SEND that finds no receive is retried after RNR NAKs until
// the peer posts one; a WRITE with a bad rkey fails with WCRemAccessErr and moves the QP to ERR.
func TestE2ERNRAndRemoteAccessError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fab := netio.NewFabric(netio.FabricConfig{})
		defer fab.Close()
		open := func(addr string) *Device {
			d, err := Open(Config{Addr: netip.MustParseAddr(addr), Network: fab.Network()})
			require.NoError(t, err)
			t.Cleanup(func() { d.Close() })
			return d
		}
		a, b := newNode(t, open("10.0.0.1")), newNode(t, open("10.0.0.2"))
		qa, qb := rcPair(t, a, b, MTU1024)
		// The RNR timer the responder advertises: code 1, 10 µs.
		require.NoError(t, qb.Modify(&QPAttr{MinRNRTimer: 1}, QPAttrMinRNRTimer))
		require.NoError(t, qa.PostSend([]SendWR{{ID: 1, Opcode: WRSend, Flags: SendSignaled, SGList: a.sge(0, 64)}}))
		waitCounter(t, func() bool { return b.d.Counters().Get(counter.SendRNRErr) > 0 })
		require.NoError(t, qb.PostRecv([]RecvWR{{ID: 2, SGList: b.sge(0, 64)}}))
		wc := a.wait(t, 1)[0]
		assert.Equal(t, WCSuccess, wc.Status, "send after RNR: %+v", wc)
		wc = b.wait(t, 1)[0]
		assert.Equal(t, WCSuccess, wc.Status, "receive after RNR: %+v", wc)
		assert.Equal(t, uint64(2), wc.WRID, "receive after RNR: %+v", wc)
		c := a.d.Counters()
		assert.NotEqual(t, uint64(0), c.Get(counter.RcvdRNRErr), "rcvd_rnr_err is 0")

		require.NoError(t, qa.PostSend([]SendWR{{ID: 3, Opcode: WRRDMAWrite, Flags: SendSignaled, SGList: a.sge(0, 64),
			RDMA: RDMAInfo{RemoteAddr: b.mr.Addr(), RKey: b.mr.RKey() ^ 0x100}}}))
		wc = a.wait(t, 1)[0]
		assert.Equal(t, WCRemAccessErr, wc.Status, "write with a bad rkey: %+v", wc)
		assert.Equal(t, uint64(3), wc.WRID, "write with a bad rkey: %+v", wc)
		assert.Equal(t, QPStateErr, qa.State(), "requester state %v after a remote access error", qa.State())
	})
}

// waitCounter checks a condition on counters once the test's goroutines have done what they can
// before a timer fires.
func waitCounter(t *testing.T, cond func() bool) {
	t.Helper()
	synctest.Wait()
	require.True(t, cond(), "condition not reached")
}

// TestE2EConcurrentPosters has several goroutines post on their own QPs of one device pair at
// once, with the race detector watching the hand-offs between posters, workers and the receive
// goroutine.
func TestE2EConcurrentPosters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := fabricPair(t)
		const pairs, msgs = 4, 50
		var wg sync.WaitGroup
		qas, qbs := make([]*QP, pairs), make([]*QP, pairs)
		for i := range pairs {
			qas[i], qbs[i] = rcPair(t, a, b, MTU1024)
			for j := range msgs {
				require.NoError(t, qbs[i].PostRecv([]RecvWR{{ID: uint64(j), SGList: b.sge(i*4096, 64)}}))
			}
		}
		for i := range pairs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range msgs {
					if err := qas[i].PostSend([]SendWR{{ID: uint64(j), Opcode: WRSend, Flags: SendSignaled, SGList: a.sge(i*4096, 64)}}); err != nil {
						assert.Fail(t, fmt.Sprintf("post: %v", err))
						return
					}
				}
			}()
		}
		wg.Wait()
		for _, wc := range a.wait(t, pairs*msgs) {
			require.Equal(t, WCSuccess, wc.Status, "send completion %+v", wc)
		}
		for _, wc := range b.wait(t, pairs*msgs) {
			require.Equal(t, WCSuccess, wc.Status, "receive completion %+v", wc)
		}
	})
}

// TestE2EGSI sends a MAD-sized datagram from QP 1 to QP 1 with the GSI Q_Key, as RDMA-CM does.
func TestE2EGSI(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := fabricPair(t)
		gsi := func(n *node) *QP {
			q := n.qp(t, QPTypeGSI)
			for _, s := range []struct {
				attr QPAttr
				mask QPAttrMask
			}{
				{QPAttr{State: QPStateInit, QKey: GSIQKey}, QPAttrState | QPAttrPKeyIndex | QPAttrQKey},
				{QPAttr{State: QPStateRTR}, QPAttrState},
				{QPAttr{State: QPStateRTS}, QPAttrState | QPAttrSQPSN},
			} {
				require.NoError(t, q.Modify(&s.attr, s.mask), "GSI -> %v", s.attr.State)
			}
			return q
		}
		ga, gb := gsi(a), gsi(b)
		require.NoError(t, gb.PostRecv([]RecvWR{{ID: 60, SGList: b.sge(0, GRHSize+256)}}))
		ah, err := a.pd.CreateAH(&AHAttr{IsGlobal: true, PortNum: 1, GRH: GlobalRoute{DGID: b.gid, SGIDIndex: 1, HopLimit: 64}})
		require.NoError(t, err)
		defer ah.Destroy()
		require.NoError(t, ga.PostSend([]SendWR{{ID: 61, Opcode: WRSend, Flags: SendSignaled, SGList: a.sge(0, 256),
			UD: UDInfo{AH: ah, RemoteQPN: 1, RemoteQKey: GSIQKey}}}))
		a.wait(t, 1)
		wc := b.wait(t, 1)[0]
		assert.Equal(t, WCSuccess, wc.Status, "GSI receive %+v", wc)
		assert.Equal(t, uint32(1), wc.QPNum, "GSI receive %+v", wc)
		assert.Equal(t, uint32(1), wc.SrcQP, "GSI receive %+v", wc)
		assert.Equal(t, uint32(40+256), wc.ByteLen, "GSI receive %+v", wc)
	})
}
