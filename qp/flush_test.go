package qp

import (
	"errors"
	"slices"
	"testing"

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
	if err := q.PostSend(wrs); err != nil {
		t.Fatal(err)
	}
	if err := q.PostRecv([]RecvWR{{ID: 1}, {ID: 2}, {ID: 3}}); err != nil {
		t.Fatal(err)
	}
	sq := q.SendQueue()
	w, _ := sq.StartNext()
	if err := sq.Complete(w.Index, cq.WCSuccess, 0); err != nil { // WR 10 completes normally
		t.Fatal(err)
	}
	started, _ := sq.StartNext() // WR 11 in flight when the QP fails
	var held RecvWQE
	if !q.PopRecv(&held) || held.ID != 1 {
		t.Fatal("pop")
	}
	q.EnterError()
	if q.State() != StateErr {
		t.Fatal("not in ERR")
	}
	if err := q.PostSend(wrs[:1]); err != nil {
		t.Fatal(err)
	}
	if err := q.PostRecv([]RecvWR{{ID: 4}}); err != nil {
		t.Fatal(err)
	}
	swcs := poll(q.SendCQ())
	if got := ids(swcs); !slices.Equal(got, []uint64{10, 11, 12, 13, 14, 10}) {
		t.Fatalf("send completions %v", got)
	}
	for _, wc := range swcs[1:] {
		if wc.Status != cq.WCWRFlushErr || wc.QPNum != q.QPN() || wc.Opcode != cq.OpcodeSend {
			t.Fatalf("flush WC %+v", wc)
		}
	}
	rwcs := poll(q.RecvCQ())
	if got := ids(rwcs); !slices.Equal(got, []uint64{1, 2, 3, 4}) {
		t.Fatalf("recv completions %v", got)
	}
	// The engine's late completions of flushed WQEs are refused.
	if err := sq.Complete(started.Index, cq.WCSuccess, 0); !errors.Is(err, ErrStale) {
		t.Fatalf("late send completion: %v", err)
	}
	if err := q.CompleteRecv(&held, &cq.WC{Opcode: cq.OpcodeRecv}, false); !errors.Is(err, ErrStale) {
		t.Fatalf("late recv completion: %v", err)
	}
	if len(poll(q.SendCQ()))+len(poll(q.RecvCQ())) != 0 {
		t.Fatal("stale completions reached a CQ")
	}
	// ERR -> RESET -> RTS works again, and positions keep counting.
	a := Attr{State: StateReset}
	if err := q.Modify(&a, AttrState); err != nil {
		t.Fatal(err)
	}
	e.to(q, StateRTS)
	if err := q.PostSend(wrs[:1]); err != nil {
		t.Fatal(err)
	}
	if h, c, tl := sq.Positions(); h != 5 || c != 5 || tl != 6 {
		t.Fatalf("positions %d %d %d", h, c, tl)
	}
}

func TestResetDiscardsWithoutCompletions(t *testing.T) {
	e := newEnv(t)
	q := e.qp(TypeUD, defaultCaps())
	e.to(q, StateRTS)
	_ = q.PostSend([]SendWR{validWR(e, TypeUD, WRSend)})
	_ = q.PostRecv([]RecvWR{{ID: 1}})
	a := Attr{State: StateReset}
	if err := q.Modify(&a, AttrState); err != nil {
		t.Fatal(err)
	}
	if len(poll(q.SendCQ()))+len(poll(q.RecvCQ())) != 0 {
		t.Fatal("RESET produced completions")
	}
	e.to(q, StateRTR)
	var w RecvWQE
	if q.PopRecv(&w) {
		t.Fatal("receive survived RESET")
	}
}

func TestSignaledCompletions(t *testing.T) {
	e := newEnv(t)
	for _, sigAll := range []bool{false, true} {
		q, err := e.table.CreateQP(e.pd, &InitAttr{Type: TypeRC, SendCQ: e.cq(8), RecvCQ: e.cq(8), Cap: defaultCaps(), SQSigAll: sigAll})
		if err != nil {
			t.Fatal(err)
		}
		e.to(q, StateRTS)
		un := validWR(e, TypeRC, WRRDMARead)
		un.ID, un.Flags = 1, 0
		sig := validWR(e, TypeRC, WRSend)
		sig.ID = 2
		bad := un
		bad.ID = 3
		_ = q.PostSend([]SendWR{un, sig, bad})
		sq := q.SendQueue()
		for _, st := range []cq.Status{cq.WCSuccess, cq.WCSuccess, cq.WCRemAccessErr} {
			w, _ := sq.StartNext()
			if err := sq.Complete(w.Index, st, 0); err != nil {
				t.Fatal(err)
			}
		}
		wcs := poll(q.SendCQ())
		want := []uint64{2, 3}
		if sigAll {
			want = []uint64{1, 2, 3}
		}
		if !slices.Equal(ids(wcs), want) {
			t.Fatalf("sigAll=%v: completions %v", sigAll, ids(wcs))
		}
		last := wcs[len(wcs)-1]
		if last.Status != cq.WCRemAccessErr || last.Opcode != cq.OpcodeRDMARead || last.ByteLen != 8 {
			t.Fatalf("error WC %+v", last)
		}
	}
}

func TestSQDDrain(t *testing.T) {
	for _, notify := range []bool{false, true} {
		e := newEnv(t)
		q := e.qp(TypeRC, defaultCaps())
		e.to(q, StateRTS)
		_ = q.PostSend([]SendWR{validWR(e, TypeRC, WRSend), validWR(e, TypeRC, WRSend)})
		sq := q.SendQueue()
		w, _ := sq.StartNext()
		a := Attr{State: StateSQD, EnSQDAsyncNotify: notify}
		if err := q.Modify(&a, AttrState|AttrEnSQDAsyncNotify); err != nil {
			t.Fatal(err)
		}
		if got, _ := q.Query(); !got.SQDraining {
			t.Fatal("not draining")
		}
		if _, ok := sq.StartNext(); ok {
			t.Fatal("new WQE started in SQD")
		}
		back := Attr{State: StateRTS}
		if err := q.Modify(&back, AttrState); !errors.Is(err, ErrSQDraining) {
			t.Fatalf("SQD->RTS while draining: %v", err)
		}
		if len(e.events.types()) != 0 {
			t.Fatal("event before the drain finished")
		}
		if err := sq.Complete(w.Index, cq.WCSuccess, 0); err != nil {
			t.Fatal(err)
		}
		want := []EventType(nil)
		if notify {
			want = []EventType{EventSQDrained}
		}
		if got := e.events.types(); !slices.Equal(got, want) {
			t.Fatalf("notify=%v: events %v", notify, got)
		}
		if got, _ := q.Query(); got.SQDraining {
			t.Fatal("still draining")
		}
		if err := q.Modify(&back, AttrState); err != nil {
			t.Fatal(err)
		}
		if w2, ok := sq.StartNext(); !ok || w2.Index != 1 {
			t.Fatal("second WQE not started after SQD->RTS")
		}
	}
	// Nothing in flight: drained at once.
	e := newEnv(t)
	q := e.qp(TypeUD, defaultCaps())
	e.to(q, StateRTS)
	a := Attr{State: StateSQD, EnSQDAsyncNotify: true}
	if err := q.Modify(&a, AttrState|AttrEnSQDAsyncNotify); err != nil {
		t.Fatal(err)
	}
	if got := e.events.types(); !slices.Equal(got, []EventType{EventSQDrained}) {
		t.Fatalf("events %v", got)
	}
}

func TestSQError(t *testing.T) {
	e := newEnv(t)
	q := e.qp(TypeUD, defaultCaps())
	e.to(q, StateRTS)
	_ = q.PostSend([]SendWR{validWR(e, TypeUD, WRSend), validWR(e, TypeUD, WRSendWithImm)})
	_ = q.PostRecv([]RecvWR{{ID: 7}})
	sq := q.SendQueue()
	w, _ := sq.StartNext()
	_ = sq.Complete(w.Index, cq.WCLocLenErr, 0)
	q.EnterSQError()
	if q.State() != StateSQE {
		t.Fatalf("state %v", q.State())
	}
	wcs := poll(q.SendCQ())
	if len(wcs) != 2 || wcs[0].Status != cq.WCLocLenErr || wcs[1].Status != cq.WCWRFlushErr {
		t.Fatalf("completions %+v", wcs)
	}
	var r RecvWQE
	if !q.PopRecv(&r) || r.ID != 7 {
		t.Fatal("receive side stopped in SQE")
	}
	a := Attr{State: StateRTS}
	if err := q.Modify(&a, AttrState); err != nil {
		t.Fatal(err)
	}
	rc := e.qp(TypeRC, defaultCaps())
	e.to(rc, StateRTS)
	rc.EnterSQError()
	if rc.State() != StateErr {
		t.Fatalf("RC after a send error: %v", rc.State())
	}
}

func TestLastWQEReachedWithSRQ(t *testing.T) {
	e := newEnv(t)
	srq, _ := e.table.CreateSRQ(e.pd, &SRQInitAttr{Attr: SRQAttr{MaxWR: 4, MaxSGE: 1}})
	_ = srq.PostRecv([]RecvWR{{ID: 1}, {ID: 2}})
	q, _ := e.table.CreateQP(e.pd, &InitAttr{Type: TypeRC, SendCQ: e.cq(4), RecvCQ: e.cq(4), SRQ: srq, Cap: defaultCaps()})
	e.to(q, StateRTS)
	var w RecvWQE
	if !q.PopRecv(&w) || w.ID != 1 {
		t.Fatal("pop from SRQ")
	}
	q.EnterError()
	// The engine still holds a WQE it took from the SRQ: the event waits for its completion.
	if got := e.events.types(); len(got) != 0 {
		t.Fatalf("events %v before the held WQE completed", got)
	}
	if srq.Len() != 1 || len(poll(q.RecvCQ())) != 0 {
		t.Fatal("SRQ was flushed")
	}
	// The engine completes the WQE it held with a flush error itself, which releases the event.
	if err := q.CompleteRecv(&w, &cq.WC{Status: cq.WCWRFlushErr, Opcode: cq.OpcodeRecv}, false); err != nil {
		t.Fatal(err)
	}
	if wcs := poll(q.RecvCQ()); len(wcs) != 1 || wcs[0].WRID != 1 || wcs[0].QPNum != q.QPN() {
		t.Fatalf("completion %+v", wcs)
	}
	if got := e.events.types(); !slices.Equal(got, []EventType{EventQPLastWQEReached}) {
		t.Fatalf("events %v", got)
	}
	// Nothing held: the event comes with the move to ERR.
	q2, _ := e.table.CreateQP(e.pd, &InitAttr{Type: TypeRC, SendCQ: e.cq(4), RecvCQ: e.cq(4), SRQ: srq, Cap: defaultCaps()})
	e.to(q2, StateRTS)
	var w2 RecvWQE
	if !q2.PopRecv(&w2) {
		t.Fatal("pop from SRQ")
	}
	if err := q2.CompleteRecv(&w2, &cq.WC{Opcode: cq.OpcodeRecv}, false); err != nil {
		t.Fatal(err)
	}
	q2.EnterError()
	if got := e.events.types(); !slices.Equal(got, []EventType{EventQPLastWQEReached, EventQPLastWQEReached}) {
		t.Fatalf("events %v", got)
	}
	_ = q2.Destroy()
	if err := srq.Destroy(); !errors.Is(err, ErrBusy) {
		t.Fatalf("destroy SRQ in use: %v", err)
	}
	_ = q.Destroy()
	if err := srq.Destroy(); err != nil {
		t.Fatal(err)
	}
}

func TestCompleteRecvInOrder(t *testing.T) {
	e := newEnv(t)
	q := e.qp(TypeUC, defaultCaps())
	e.to(q, StateRTR)
	_ = q.PostRecv([]RecvWR{{ID: 1}, {ID: 2}})
	var a, b RecvWQE
	q.PopRecv(&a)
	q.PopRecv(&b)
	if err := q.CompleteRecv(&b, &cq.WC{}, false); !errors.Is(err, ErrStale) {
		t.Fatalf("out of order: %v", err)
	}
	wc := cq.WC{Opcode: cq.OpcodeRecv, ByteLen: 5, WCFlags: cq.WCFlagWithImm, ImmData: 9}
	if err := q.CompleteRecv(&a, &wc, true); err != nil {
		t.Fatal(err)
	}
	if err := q.CompleteRecv(&b, &cq.WC{}, false); err != nil {
		t.Fatal(err)
	}
	wcs := poll(q.RecvCQ())
	if !slices.Equal(ids(wcs), []uint64{1, 2}) || wcs[0].ImmData != 9 || wcs[0].QPNum != q.QPN() {
		t.Fatalf("completions %+v", wcs)
	}
}
