package gorxe

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests in this file check the rule CreateCQ documents: a CQ with at least as many entries as
// the queues completing into it are deep never overruns, however a program posts and polls,
// because a work request keeps its queue slot until its completion has been polled.

// cqCtx bounds a test's waiting and ends it early when one of the devices raises EventCQErr, so
// an overrun fails the test at once instead of leaving it waiting for completions that will
// never come.
func cqCtx(t *testing.T, devs ...*Device) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeoutCause(context.Background(), 60*time.Second, errors.New("timed out"))
	var wg sync.WaitGroup
	for _, d := range devs {
		wg.Go(func() {
			for {
				ev, err := d.GetAsyncEvent(ctx)
				if err != nil {
					return
				}
				if ev.Type == EventCQErr {
					cancel()
					return
				}
			}
		})
	}
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	return ctx
}

// sizedCQ creates a CQ of cqe entries with a completion channel of its own, for CQ.Wait.
func sizedCQ(t *testing.T, d *Device, cqe int) *CQ {
	t.Helper()
	ch, err := d.CreateCompChannel()
	require.NoError(t, err)
	c, err := d.CreateCQ(cqe, ch)
	require.NoError(t, err)
	t.Cleanup(func() {
		c.Destroy()
		ch.Destroy()
	})
	return c
}

// sizedQP creates an RC QP on n with the given CQs and queue depths.
func sizedQP(t *testing.T, n *node, scq, rcq *CQ, srq *SRQ, sendWR, recvWR int) *QP {
	t.Helper()
	q, err := n.d.CreateQP(n.pd, &QPInitAttr{SendCQ: scq, RecvCQ: rcq, SRQ: srq, QPType: QPTypeRC,
		Cap: QPCap{MaxSendWR: sendWR, MaxRecvWR: recvWR, MaxSendSGE: 1, MaxRecvSGE: 1}})
	require.NoError(t, err)
	t.Cleanup(func() { q.Destroy() })
	return q
}

// pollSome waits for completions on c and polls what is there into wcs.
func pollSome(t *testing.T, ctx context.Context, c *CQ, wcs []WC) []WC {
	t.Helper()
	for {
		if n := c.Poll(wcs); n > 0 {
			return wcs[:n]
		}
		require.NoError(t, c.Err(), "CQ failed")
		require.NoError(t, c.Wait(ctx), "waiting for completions (cause %v)", context.Cause(ctx))
	}
}

// postUntilFull posts WRITEs to the peer until the send queue refuses one or total were posted;
// every every-th one is signaled. It returns the new number posted.
func postUntilFull(t *testing.T, a, b *node, q *QP, posted, total, every int) int {
	t.Helper()
	for ; posted < total; posted++ {
		wr := []SendWR{{ID: uint64(posted), Opcode: WRRDMAWrite, SGList: a.sge(0, 64),
			RDMA: RDMAInfo{RemoteAddr: b.mr.Addr(), RKey: b.mr.RKey()}}}
		if (posted+1)%every == 0 {
			wr[0].Flags = SendSignaled
		}
		if err := q.PostSend(wr); err != nil {
			require.ErrorIs(t, err, ErrQueueFull, "post %d", posted)
			return posted
		}
	}
	return posted
}

// TestCQOfSendQueueDepth: one goroutine posts until ErrQueueFull, then polls, with a CQ exactly
// as deep as the send queue, and never overruns it; every completion arrives in order. With one
// work request in eight signaled, an unsignaled one keeps its slot until a later signaled one's
// completion is polled, so any 64 slots hold at most 8 unpolled completions and a CQ of 8 is
// enough.
func TestCQOfSendQueueDepth(t *testing.T) {
	const depth, total = 64, 12800
	for _, every := range []int{1, 8} {
		t.Run(map[int]string{1: "AllSignaled", 8: "OneInEightSignaled"}[every], func(t *testing.T) {
			a, b := fabricPair(t)
			scq := sizedCQ(t, a.d, depth/every)
			qa := sizedQP(t, a, scq, a.cq, nil, depth, 1)
			qb := b.qp(t, QPTypeRC)
			connectRC(t, qa, b.gid, qb.QPN(), 0x100, 0x200, MTU1024)
			connectRC(t, qb, a.gid, qa.QPN(), 0x200, 0x100, MTU1024)
			ctx := cqCtx(t, a.d, b.d)

			wcs := make([]WC, 16)
			posted, polled := 0, 0
			for polled < total/every {
				posted = postUntilFull(t, a, b, qa, posted, total, every)
				for _, wc := range pollSome(t, ctx, scq, wcs) {
					require.Equal(t, WCSuccess, wc.Status, "%+v", wc)
					require.Equal(t, uint64((polled+1)*every-1), wc.WRID, "completions in order")
					polled++
				}
			}
			assert.Equal(t, total, posted)
			assert.NoError(t, scq.Err())
			assert.Equal(t, QPStateRTS, qa.State())
		})
	}
}

// TestCQOfSendQueueDepthManyPosters has 64 goroutines post to one QP whose CQ is as deep as its
// send queue; each polls one completion of the shared CQ when the queue is full.
func TestCQOfSendQueueDepthManyPosters(t *testing.T) {
	const depth, posters, each = 128, 64, 100
	a, b := fabricPair(t)
	scq := sizedCQ(t, a.d, depth)
	qa := sizedQP(t, a, scq, a.cq, nil, depth, 1)
	qb := b.qp(t, QPTypeRC)
	connectRC(t, qa, b.gid, qb.QPN(), 0x100, 0x200, MTU1024)
	connectRC(t, qb, a.gid, qa.QPN(), 0x200, 0x100, MTU1024)
	ctx := cqCtx(t, a.d, b.d)

	var polled atomic.Int64
	seen := make([]atomic.Bool, posters*each)
	// poll takes what the CQ holds; it reports false once the test must stop.
	poll := func(wcs []WC) bool {
		for _, wc := range wcs[:scq.Poll(wcs)] {
			if !assert.Equal(t, WCSuccess, wc.Status, "%+v", wc) || !assert.False(t, seen[wc.WRID].Swap(true), "WR %d twice", wc.WRID) {
				return false
			}
			polled.Add(1)
		}
		return assert.NoError(t, scq.Err()) && assert.NoError(t, ctx.Err(), context.Cause(ctx))
	}
	var wg sync.WaitGroup
	for g := range posters {
		wg.Go(func() {
			wcs := make([]WC, 1)
			for i := 0; i < each; {
				wr := []SendWR{{ID: uint64(g*each + i), Opcode: WRRDMAWrite, Flags: SendSignaled, SGList: a.sge(g*64, 64),
					RDMA: RDMAInfo{RemoteAddr: b.mr.Addr() + uint64(g*64), RKey: b.mr.RKey()}}}
				err := qa.PostSend(wr)
				switch {
				case err == nil:
					i++
				case !assert.ErrorIs(t, err, ErrQueueFull):
					return
				case !poll(wcs):
					return
				default:
					runtime.Gosched()
				}
			}
			for polled.Load() < posters*each {
				if !poll(wcs) {
					return
				}
				runtime.Gosched()
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int64(posters*each), polled.Load())
	assert.NoError(t, scq.Err())
	assert.Equal(t, QPStateRTS, qa.State())
}

// TestCQOfRecvQueueDepth: the peer fills the receive queue faster than the receiver polls; the
// receiver reposts only after polling, and a repost before polling is refused with ErrQueueFull,
// so a receive CQ as deep as the receive queue (or the SRQ) never overruns.
func TestCQOfRecvQueueDepth(t *testing.T) {
	const depth, rounds = 16, 50
	for _, shared := range []bool{false, true} {
		t.Run(map[bool]string{false: "RecvQueue", true: "SRQ"}[shared], func(t *testing.T) {
			a, b := fabricPair(t)
			rcq := sizedCQ(t, b.d, depth)
			var srq *SRQ
			var post func([]RecvWR) error
			if shared {
				var err error
				srq, err = b.d.CreateSRQ(b.pd, &SRQInitAttr{Attr: SRQAttr{MaxWR: depth, MaxSGE: 1}})
				require.NoError(t, err)
				post = srq.PostRecv
			}
			qb := sizedQP(t, b, b.cq, rcq, srq, 1, depth)
			if !shared {
				post = qb.PostRecv
			}
			t.Cleanup(func() {
				qb.Destroy()
				if srq != nil {
					srq.Destroy()
				}
			})
			sendCQ := sizedCQ(t, a.d, depth)
			qa := sizedQP(t, a, sendCQ, a.cq, nil, depth, 1)
			connectRC(t, qa, b.gid, qb.QPN(), 0x100, 0x200, MTU1024)
			connectRC(t, qb, a.gid, qa.QPN(), 0x200, 0x100, MTU1024)
			ctx := cqCtx(t, a.d, b.d)

			recv := func(id int) []RecvWR { return []RecvWR{{ID: uint64(id), SGList: b.sge(id%depth*64, 64)}} }
			for i := range depth {
				require.NoError(t, post(recv(i)))
			}
			require.ErrorIs(t, post(recv(depth)), ErrQueueFull, "a full receive queue")
			wcs := make([]WC, depth)
			next, sent := depth, 0
			for round := range rounds {
				// The peer sends as many messages as there are receives, and they all complete
				// (RC: a SEND completes once the receiver has consumed its receive).
				for range depth {
					require.NoError(t, qa.PostSend([]SendWR{{ID: uint64(sent), Opcode: WRSend, Flags: SendSignaled,
						SGList: a.sge(0, 8+sent%32)}}))
					sent++
				}
				for done := 0; done < depth; {
					for _, wc := range pollSome(t, ctx, sendCQ, wcs) {
						require.Equal(t, WCSuccess, wc.Status, "%+v", wc)
						done++
					}
				}
				require.ErrorIs(t, post(recv(next)), ErrQueueFull, "round %d: repost before polling", round)
				// Poll one completion at a time, reposting after each.
				for i := range depth {
					wc := pollSome(t, ctx, rcq, wcs[:1])[0]
					require.Equal(t, WCSuccess, wc.Status, "%+v", wc)
					require.Equal(t, uint64(round*depth+i), wc.WRID, "receive completions in order")
					require.Equal(t, uint32(8+(round*depth+i)%32), wc.ByteLen)
					require.NoError(t, post(recv(next)), "round %d: repost after polling", round)
					next++
				}
			}
			assert.NoError(t, rcq.Err())
			assert.Equal(t, QPStateRTS, qb.State())
		})
	}
}
