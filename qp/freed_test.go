package qp

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cq"
)

// fillSend posts send WRs until the queue is full and returns how many fit; every every-th one is
// signaled (0: none).
func fillSend(t *testing.T, e *env, q *QP, every int) int {
	t.Helper()
	wr := validWR(e, q.Type(), WRSend)
	for n := 0; ; n++ {
		require.Less(t, n, 1000, "the queue never filled (state %v)", q.State())
		wr.ID, wr.Flags = uint64(n), 0
		if every > 0 && (n+1)%every == 0 {
			wr.Flags = SendSignaled
		}
		err := postSend(q, []SendWR{wr})
		if err != nil {
			require.ErrorIs(t, err, ErrQueueFull)
			return n
		}
	}
}

// completeAll starts and completes every posted send WQE with st.
func completeAll(t *testing.T, q *QP, st cq.Status) {
	t.Helper()
	sq := q.SendQueue()
	for {
		w, ok := sq.StartNext()
		if !ok {
			return
		}
		require.NoError(t, sq.Complete(w.Index, st, 0))
	}
}

// TestSendSlotsFreeWhenPolled checks the hardware rule: a send WQE keeps its slot until its
// completion is polled, and an unsignaled one until a later signaled one's is.
func TestSendSlotsFreeWhenPolled(t *testing.T) {
	e := newEnv(t)
	q := e.qp(TypeRC, defaultCaps()) // 8 send slots
	e.to(q, StateRTS)
	require.Equal(t, 8, fillSend(t, e, q, 4), "posted into an empty queue")
	completeAll(t, q, cq.WCSuccess)
	assert.Equal(t, 0, fillSend(t, e, q, 4), "posted with every completion generated, none polled")
	wcs := make([]cq.WC, 1)
	require.Equal(t, 1, q.SendCQ().Poll(wcs))
	require.Equal(t, uint64(3), wcs[0].WRID)
	assert.Equal(t, 4, fillSend(t, e, q, 4), "posted after polling the completion of WR 3, which frees WRs 0-3")

	// Positions 8-11 are outstanding (11 signaled); polling WR 7 frees 4-7.
	require.Len(t, poll(q.SendCQ()), 1)
	assert.Equal(t, 4, fillSend(t, e, q, 0), "posted after polling WR 7")
	// 12-15 are unsignaled: they complete without a WC and keep their slots.
	completeAll(t, q, cq.WCSuccess)
	require.Len(t, poll(q.SendCQ()), 1) // position 11
	assert.Equal(t, 4, fillSend(t, e, q, 0), "posted with four completed unsignaled WQEs in the queue")
	completeAll(t, q, cq.WCSuccess)
	assert.Empty(t, poll(q.SendCQ()))
	assert.Equal(t, 0, fillSend(t, e, q, 0), "unsignaled WQEs completed, no signaled one behind them")
}

// reset moves q to RESET.
func reset(t *testing.T, q *QP) {
	t.Helper()
	a := Attr{State: StateReset}
	require.NoError(t, q.Modify(&a, AttrState))
}

// TestErrorAndFlushCompletionsFreeWhenPolled: an error completion and the flush completions behind
// it hold their slots until polled; unsignaled WQEs that completed before the flush free at once,
// since no completion will ever give them back.
func TestErrorAndFlushCompletionsFreeWhenPolled(t *testing.T) {
	e := newEnv(t)
	q := e.qp(TypeUD, defaultCaps())
	e.to(q, StateRTS)
	require.Equal(t, 8, fillSend(t, e, q, 0))
	sq := q.SendQueue()
	for range 2 { // two unsignaled WQEs complete without a WC
		w, _ := sq.StartNext()
		require.NoError(t, sq.Complete(w.Index, cq.WCSuccess, 0))
	}
	w, _ := sq.StartNext()
	_, moved, err := sq.Fail(w.Index, cq.WCLocLenErr) // UD: to SQE, the other five flushed
	require.NoError(t, err)
	require.True(t, moved)
	a := Attr{State: StateRTS}
	require.NoError(t, q.Modify(&a, AttrState))
	assert.Equal(t, 0, fillSend(t, e, q, 0), "posted with the error and flush completions unpolled")
	wcs := make([]cq.WC, 1)
	require.Equal(t, 1, q.SendCQ().Poll(wcs))
	assert.Equal(t, cq.WCLocLenErr, wcs[0].Status)
	assert.Equal(t, 3, fillSend(t, e, q, 0), "posted after polling the error completion")
	require.Len(t, poll(q.SendCQ()), 5, "flush completions")
	assert.Equal(t, 5, fillSend(t, e, q, 0), "posted after polling the flush completions")

	// Entering ERR with only completed unsignaled WQEs in the queue frees them at once.
	completeAll(t, q, cq.WCSuccess)
	a = Attr{State: StateErr}
	require.NoError(t, q.Modify(&a, AttrState))
	assert.Empty(t, poll(q.SendCQ()))
	reset(t, q)
	e.to(q, StateRTS)
	assert.Equal(t, 8, fillSend(t, e, q, 0), "posted after ERR and RESET")
}

// TestResetFreesWhatNoCompletionReturns: RESET frees the slots of the WQEs it drops at once, while
// completions already queued keep theirs until polled, so the CQ bound holds across a reconnect.
func TestResetFreesWhatNoCompletionReturns(t *testing.T) {
	e := newEnv(t)
	q := e.qp(TypeRC, defaultCaps())
	e.to(q, StateRTS)
	require.Equal(t, 8, fillSend(t, e, q, 1))
	sq := q.SendQueue()
	for range 3 {
		w, _ := sq.StartNext()
		require.NoError(t, sq.Complete(w.Index, cq.WCSuccess, 0))
	}
	require.NoError(t, q.PostRecv([]RecvWR{{ID: 1}, {ID: 2}}))
	reset(t, q)
	e.to(q, StateRTS)
	assert.Equal(t, 5, fillSend(t, e, q, 1), "send slots after RESET with 3 completions unpolled")
	require.Len(t, poll(q.SendCQ()), 3)
	assert.Equal(t, 3, fillSend(t, e, q, 1), "send slots after polling them")
	require.NoError(t, q.PostRecv(make([]RecvWR, 8)), "receive slots after RESET")
}

// TestRecvSlotsFreeWhenPolled covers a QP's own receive queue: completion, flush and reset.
func TestRecvSlotsFreeWhenPolled(t *testing.T) {
	e := newEnv(t)
	q := e.qp(TypeRC, defaultCaps()) // 8 receive slots
	e.to(q, StateRTS)
	require.NoError(t, q.PostRecv(make([]RecvWR, 8)))
	var w RecvWQE
	for range 3 {
		require.True(t, q.PopRecv(&w))
		require.NoError(t, q.CompleteRecv(&w, &cq.WC{Opcode: cq.OpcodeRecv}, false))
	}
	require.ErrorIs(t, q.PostRecv(make([]RecvWR, 1)), ErrQueueFull, "repost before polling")
	require.Len(t, poll(q.RecvCQ()), 3)
	require.NoError(t, q.PostRecv(make([]RecvWR, 3)), "repost after polling")
	require.ErrorIs(t, q.PostRecv(make([]RecvWR, 1)), ErrQueueFull)

	a := Attr{State: StateErr}
	require.NoError(t, q.Modify(&a, AttrState))
	reset(t, q)
	e.to(q, StateInit)
	require.ErrorIs(t, q.PostRecv(make([]RecvWR, 1)), ErrQueueFull, "flush completions unpolled")
	require.Len(t, poll(q.RecvCQ()), 8)
	require.NoError(t, q.PostRecv(make([]RecvWR, 8)), "after polling the flush completions")
	reset(t, q)
	e.to(q, StateInit)
	require.NoError(t, q.PostRecv(make([]RecvWR, 8)), "RESET frees dropped receives at once")
}

// TestSRQSlotsFreeWhenPolled: an SRQ slot frees when the completion of its WQE is polled, whichever
// QP took it; a QP's RESET frees the WQEs its transport held, and their late completion is stale.
func TestSRQSlotsFreeWhenPolled(t *testing.T) {
	e := newEnv(t)
	srq, err := e.table.CreateSRQ(e.pd, &SRQInitAttr{Attr: SRQAttr{MaxWR: 4, MaxSGE: 1}})
	require.NoError(t, err)
	rcq := e.cq(8)
	var qs [2]*QP
	for i := range qs {
		qs[i], err = e.table.CreateQP(e.pd, &InitAttr{Type: TypeRC, SendCQ: e.cq(4), RecvCQ: rcq, SRQ: srq, Cap: defaultCaps()})
		require.NoError(t, err)
		e.to(qs[i], StateRTS)
	}
	require.NoError(t, srq.PostRecv(make([]RecvWR, 4)))
	var w0, w1 RecvWQE
	require.True(t, qs[0].PopRecv(&w0))
	require.True(t, qs[1].PopRecv(&w1))
	require.NoError(t, qs[1].CompleteRecv(&w1, &cq.WC{Opcode: cq.OpcodeRecv}, false))
	require.ErrorIs(t, srq.PostRecv(make([]RecvWR, 1)), ErrQueueFull, "completion not polled, WQE held")
	require.Len(t, poll(rcq), 1)
	require.NoError(t, srq.PostRecv(make([]RecvWR, 1)), "after polling")
	require.ErrorIs(t, srq.PostRecv(make([]RecvWR, 1)), ErrQueueFull)

	reset(t, qs[0]) // its transport drops w0
	require.NoError(t, srq.PostRecv(make([]RecvWR, 1)), "RESET frees the WQE the QP held")
	require.ErrorIs(t, qs[0].CompleteRecv(&w0, &cq.WC{Opcode: cq.OpcodeRecv}, false), ErrStale, "completion after RESET")
	require.Empty(t, poll(rcq))
	require.ErrorIs(t, srq.PostRecv(make([]RecvWR, 1)), ErrQueueFull)
}
