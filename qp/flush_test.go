package qp

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cq"
)

func ids(wcs []cq.WC) []uint64 {
	var r []uint64
	for _, w := range wcs {
		r = append(r, w.WRID)
	}
	return r
}

// TestFlushOrder: entering ERR completes every outstanding WQE in order, signaled or not, started
// or not, and later posts follow them.
func TestFlushOrder(t *testing.T) {
	e := newEnv(t)
	q := e.qp(TypeRC, defaultCaps())
	e.to(q, StateRTS)
	var wrs []SendWR
	for i := range 5 {
		wr := validWR(e, TypeRC, WRSend)
		wr.ID = uint64(10 + i)
		if i%2 == 1 {
			wr.Flags = 0
		}
		wrs = append(wrs, wr)
	}
	require.NoError(t, postSend(q, wrs))
	require.NoError(t, q.PostRecv([]RecvWR{{ID: 1}, {ID: 2}, {ID: 3}}))
	sq := q.SendQueue()
	w, _ := sq.StartNext()
	require.NoError(t, sq.Complete(w.Index, cq.WCSuccess, 0)) // WR 10 completes normally
	started, _ := sq.StartNext()                              // WR 11 in flight when the QP fails
	var held RecvWQE
	require.True(t, q.PopRecv(&held), "pop")
	require.Equal(t, uint64(1), held.ID, "pop")
	q.EnterError()
	require.Equal(t, StateErr, q.State())
	require.NoError(t, postSend(q, wrs[:1]))
	require.NoError(t, q.PostRecv([]RecvWR{{ID: 4}}))
	swcs := poll(q.SendCQ())
	require.Equal(t, []uint64{10, 11, 12, 13, 14, 10}, ids(swcs), "send completions")
	for _, wc := range swcs[1:] {
		require.Equal(t, cq.WCWRFlushErr, wc.Status, "flush WC %d", wc.WRID)
		require.Equal(t, q.QPN(), wc.QPNum, "flush WC %d", wc.WRID)
		require.Equal(t, cq.OpcodeSend, wc.Opcode, "flush WC %d", wc.WRID)
	}
	rwcs := poll(q.RecvCQ())
	require.Equal(t, []uint64{1, 2, 3, 4}, ids(rwcs), "recv completions")
	// The engine's late completions of flushed WQEs are refused.
	require.ErrorIs(t, sq.Complete(started.Index, cq.WCSuccess, 0), ErrStale, "late send completion")
	require.ErrorIs(t, q.CompleteRecv(&held, &cq.WC{Opcode: cq.OpcodeRecv}, false), ErrStale, "late recv completion")
	require.Empty(t, poll(q.SendCQ()), "stale completions reached the send CQ")
	require.Empty(t, poll(q.RecvCQ()), "stale completions reached the receive CQ")
	// ERR -> RESET -> RTS works again, and positions keep counting.
	a := Attr{State: StateReset}
	require.NoError(t, q.Modify(&a, AttrState))
	e.to(q, StateRTS)
	require.NoError(t, postSend(q, wrs[:1]))
	h, c, tl := sq.Positions()
	require.Equal(t, uint64(5), h, "head")
	require.Equal(t, uint64(5), c, "cursor")
	require.Equal(t, uint64(6), tl, "tail")
}

func TestResetDiscardsWithoutCompletions(t *testing.T) {
	e := newEnv(t)
	q := e.qp(TypeUD, defaultCaps())
	e.to(q, StateRTS)
	_ = postSend(q, []SendWR{validWR(e, TypeUD, WRSend)})
	_ = q.PostRecv([]RecvWR{{ID: 1}})
	a := Attr{State: StateReset}
	require.NoError(t, q.Modify(&a, AttrState))
	require.Empty(t, poll(q.SendCQ()), "RESET produced send completions")
	require.Empty(t, poll(q.RecvCQ()), "RESET produced receive completions")
	e.to(q, StateRTR)
	var w RecvWQE
	require.False(t, q.PopRecv(&w), "receive survived RESET")
}

func TestSignaledCompletions(t *testing.T) {
	e := newEnv(t)
	for _, sigAll := range []bool{false, true} {
		q, err := e.table.CreateQP(e.pd, &InitAttr{Type: TypeRC, SendCQ: e.cq(8), RecvCQ: e.cq(8), Cap: defaultCaps(), SQSigAll: sigAll})
		require.NoError(t, err)
		e.to(q, StateRTS)
		un := validWR(e, TypeRC, WRRDMARead)
		un.ID, un.Flags = 1, 0
		sig := validWR(e, TypeRC, WRSend)
		sig.ID = 2
		bad := un
		bad.ID = 3
		_ = postSend(q, []SendWR{un, sig, bad})
		sq := q.SendQueue()
		for _, st := range []cq.Status{cq.WCSuccess, cq.WCSuccess, cq.WCRemAccessErr} {
			w, _ := sq.StartNext()
			require.NoError(t, sq.Complete(w.Index, st, 0))
		}
		wcs := poll(q.SendCQ())
		want := []uint64{2, 3}
		if sigAll {
			want = []uint64{1, 2, 3}
		}
		require.Equal(t, want, ids(wcs), "sigAll=%v: completions", sigAll)
		last := wcs[len(wcs)-1]
		require.Equal(t, cq.WCRemAccessErr, last.Status, "error WC")
		require.Equal(t, cq.OpcodeRDMARead, last.Opcode, "error WC")
		require.Equal(t, uint32(8), last.ByteLen, "error WC")
	}
}

func TestSQDDrain(t *testing.T) {
	for _, notify := range []bool{false, true} {
		e := newEnv(t)
		q := e.qp(TypeRC, defaultCaps())
		e.to(q, StateRTS)
		_ = postSend(q, []SendWR{validWR(e, TypeRC, WRSend), validWR(e, TypeRC, WRSend)})
		sq := q.SendQueue()
		w, _ := sq.StartNext()
		a := Attr{State: StateSQD, EnSQDAsyncNotify: notify}
		require.NoError(t, q.Modify(&a, AttrState|AttrEnSQDAsyncNotify))
		got, _ := q.Query()
		require.True(t, got.SQDraining, "SQ draining after RTS->SQD")
		_, ok := sq.StartNext()
		require.False(t, ok, "new WQE started in SQD")
		back := Attr{State: StateRTS}
		require.ErrorIs(t, q.Modify(&back, AttrState), ErrSQDraining, "SQD->RTS while draining")
		require.Empty(t, e.events.types(), "event before the drain finished")
		require.NoError(t, sq.Complete(w.Index, cq.WCSuccess, 0))
		want := []EventType(nil)
		if notify {
			want = []EventType{EventSQDrained}
		}
		require.Equal(t, want, e.events.types(), "notify=%v: events", notify)
		got, _ = q.Query()
		require.False(t, got.SQDraining, "still draining")
		require.NoError(t, q.Modify(&back, AttrState))
		w2, ok := sq.StartNext()
		require.True(t, ok, "second WQE not started after SQD->RTS")
		require.Equal(t, uint64(1), w2.Index, "second WQE after SQD->RTS")
	}
	// Nothing in flight: drained at once.
	e := newEnv(t)
	q := e.qp(TypeUD, defaultCaps())
	e.to(q, StateRTS)
	a := Attr{State: StateSQD, EnSQDAsyncNotify: true}
	require.NoError(t, q.Modify(&a, AttrState|AttrEnSQDAsyncNotify))
	require.Equal(t, []EventType{EventSQDrained}, e.events.types(), "events")
}

func TestSQError(t *testing.T) {
	e := newEnv(t)
	q := e.qp(TypeUD, defaultCaps())
	e.to(q, StateRTS)
	_ = postSend(q, []SendWR{validWR(e, TypeUD, WRSend), validWR(e, TypeUD, WRSendWithImm)})
	_ = q.PostRecv([]RecvWR{{ID: 7}})
	sq := q.SendQueue()
	w, _ := sq.StartNext()
	_ = sq.Complete(w.Index, cq.WCLocLenErr, 0)
	q.EnterSQError()
	require.Equal(t, StateSQE, q.State())
	wcs := poll(q.SendCQ())
	require.Len(t, wcs, 2, "completions")
	require.Equal(t, []cq.Status{cq.WCLocLenErr, cq.WCWRFlushErr}, []cq.Status{wcs[0].Status, wcs[1].Status}, "completion statuses")
	var r RecvWQE
	require.True(t, q.PopRecv(&r), "receive side stopped in SQE")
	require.Equal(t, uint64(7), r.ID, "receive in SQE")
	a := Attr{State: StateRTS}
	require.NoError(t, q.Modify(&a, AttrState))
	rc := e.qp(TypeRC, defaultCaps())
	e.to(rc, StateRTS)
	rc.EnterSQError()
	require.Equal(t, StateErr, rc.State(), "RC after a send error")
}

func TestLastWQEReachedWithSRQ(t *testing.T) {
	e := newEnv(t)
	srq, _ := e.table.CreateSRQ(e.pd, &SRQInitAttr{Attr: SRQAttr{MaxWR: 4, MaxSGE: 1}})
	_ = srq.PostRecv([]RecvWR{{ID: 1}, {ID: 2}})
	q, _ := e.table.CreateQP(e.pd, &InitAttr{Type: TypeRC, SendCQ: e.cq(4), RecvCQ: e.cq(4), SRQ: srq, Cap: defaultCaps()})
	e.to(q, StateRTS)
	var w RecvWQE
	require.True(t, q.PopRecv(&w), "pop from SRQ")
	require.Equal(t, uint64(1), w.ID, "pop from SRQ")
	q.EnterError()
	// The engine still holds a WQE it took from the SRQ: the event waits for its completion.
	require.Empty(t, e.events.types(), "events before the held WQE completed")
	require.Equal(t, 1, srq.Len(), "SRQ was flushed")
	require.Empty(t, poll(q.RecvCQ()), "SRQ was flushed")
	// The engine completes the WQE it held with a flush error itself, which releases the event.
	require.NoError(t, q.CompleteRecv(&w, &cq.WC{Status: cq.WCWRFlushErr, Opcode: cq.OpcodeRecv}, false))
	wcs := poll(q.RecvCQ())
	require.Len(t, wcs, 1, "completions")
	require.Equal(t, uint64(1), wcs[0].WRID, "completion")
	require.Equal(t, q.QPN(), wcs[0].QPNum, "completion")
	require.Equal(t, []EventType{EventQPLastWQEReached}, e.events.types(), "events")
	// Nothing held: the event comes with the move to ERR.
	q2, _ := e.table.CreateQP(e.pd, &InitAttr{Type: TypeRC, SendCQ: e.cq(4), RecvCQ: e.cq(4), SRQ: srq, Cap: defaultCaps()})
	e.to(q2, StateRTS)
	var w2 RecvWQE
	require.True(t, q2.PopRecv(&w2), "pop from SRQ")
	require.NoError(t, q2.CompleteRecv(&w2, &cq.WC{Opcode: cq.OpcodeRecv}, false))
	q2.EnterError()
	require.Equal(t, []EventType{EventQPLastWQEReached, EventQPLastWQEReached}, e.events.types(), "events")
	_ = q2.Destroy()
	require.ErrorIs(t, srq.Destroy(), ErrBusy, "destroy SRQ in use")
	_ = q.Destroy()
	require.NoError(t, srq.Destroy())
}

func TestCompleteRecvInOrder(t *testing.T) {
	e := newEnv(t)
	q := e.qp(TypeUC, defaultCaps())
	e.to(q, StateRTR)
	_ = q.PostRecv([]RecvWR{{ID: 1}, {ID: 2}})
	var a, b RecvWQE
	q.PopRecv(&a)
	q.PopRecv(&b)
	require.ErrorIs(t, q.CompleteRecv(&b, &cq.WC{}, false), ErrStale, "out of order")
	wc := cq.WC{Opcode: cq.OpcodeRecv, ByteLen: 5, WCFlags: cq.WCFlagWithImm, ImmData: 9}
	require.NoError(t, q.CompleteRecv(&a, &wc, true))
	require.NoError(t, q.CompleteRecv(&b, &cq.WC{}, false))
	wcs := poll(q.RecvCQ())
	require.Equal(t, []uint64{1, 2}, ids(wcs), "completions")
	require.Equal(t, uint32(9), wcs[0].ImmData, "first completion")
	require.Equal(t, q.QPN(), wcs[0].QPNum, "first completion")
}
