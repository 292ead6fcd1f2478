package qp

import (
	"errors"
	"slices"
	"testing"
)

func TestSRQLimitEvent(t *testing.T) {
	e := newEnv(t)
	srq, err := e.table.CreateSRQ(e.pd, &SRQInitAttr{Attr: SRQAttr{MaxWR: 8, MaxSGE: 2}})
	if err != nil {
		t.Fatal(err)
	}
	q, _ := e.table.CreateQP(e.pd, &InitAttr{Type: TypeUD, SendCQ: e.cq(4), RecvCQ: e.cq(4), SRQ: srq, Cap: defaultCaps()})
	e.to(q, StateRTR)
	_ = srq.PostRecv([]RecvWR{{ID: 1}, {ID: 2}, {ID: 3}, {ID: 4}, {ID: 5}})
	if err := srq.Modify(&SRQAttr{SRQLimit: 3}, SRQLimit); err != nil {
		t.Fatal(err)
	}
	var w RecvWQE
	pop := func() uint64 {
		t.Helper()
		if !q.PopRecv(&w) {
			t.Fatal("SRQ empty")
		}
		return w.ID
	}
	pop() // 4 left
	pop() // 3 left: not below the limit yet
	if len(e.events.types()) != 0 {
		t.Fatal("event at the limit")
	}
	pop() // 2 left: below
	if got := e.events.types(); !slices.Equal(got, []EventType{EventSRQLimitReached}) || e.events.events[0].SRQ != srq {
		t.Fatalf("events %v", got)
	}
	if srq.Query().SRQLimit != 0 {
		t.Fatal("limit still armed after firing")
	}
	pop()
	if len(e.events.types()) != 1 {
		t.Fatal("event fired twice")
	}
	// Re-arm: fires again on the next drop below.
	_ = srq.Modify(&SRQAttr{SRQLimit: 2}, SRQLimit)
	if id := pop(); id != 5 {
		t.Fatalf("popped %d", id)
	}
	if len(e.events.types()) != 2 {
		t.Fatal("re-armed limit did not fire")
	}
	if q.PopRecv(&w) {
		t.Fatal("pop from empty SRQ")
	}
}

func TestSRQModifyAndQuery(t *testing.T) {
	e := newEnv(t)
	if _, err := e.table.CreateSRQ(e.pd, &SRQInitAttr{Attr: SRQAttr{MaxWR: 0}}); !errors.Is(err, ErrInvalidCaps) {
		t.Fatalf("max_wr 0: %v", err)
	}
	if _, err := e.table.CreateSRQ(e.pd, &SRQInitAttr{Attr: SRQAttr{MaxWR: 4, MaxSGE: 28}}); !errors.Is(err, ErrInvalidCaps) {
		t.Fatalf("max_sge 28: %v", err)
	}
	if _, err := e.table.CreateSRQ(e.pd, &SRQInitAttr{Attr: SRQAttr{MaxWR: 4, SRQLimit: 5}}); !errors.Is(err, ErrInvalidAttr) {
		t.Fatalf("limit above max_wr: %v", err)
	}
	srq, _ := e.table.CreateSRQ(e.pd, &SRQInitAttr{Attr: SRQAttr{MaxWR: 4, MaxSGE: 1}})
	_ = srq.PostRecv([]RecvWR{{ID: 1, SGList: sge(10)}, {ID: 2}, {ID: 3}})
	if err := srq.PostRecv([]RecvWR{{ID: 4}, {ID: 5}}); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("full: %v", err)
	}
	if err := srq.Modify(&SRQAttr{MaxWR: 3}, SRQMaxWR); !errors.Is(err, ErrInvalidCaps) {
		t.Fatalf("shrink below queued: %v", err)
	}
	if err := srq.Modify(&SRQAttr{MaxWR: 16}, SRQMaxWR); err != nil {
		t.Fatal(err)
	}
	if got := srq.Query(); got != (SRQAttr{MaxWR: 16, MaxSGE: 1}) {
		t.Fatalf("query %+v", got)
	}
	if err := srq.PostRecv([]RecvWR{{ID: 5, SGList: append(sge(1), sge(1)...)}}); !errors.Is(err, ErrTooManySGE) {
		t.Fatalf("sges: %v", err)
	}
	_ = srq.PostRecv([]RecvWR{{ID: 5}})
	q, _ := e.table.CreateQP(e.pd, &InitAttr{Type: TypeRC, SendCQ: e.cq(4), RecvCQ: e.cq(4), SRQ: srq})
	e.to(q, StateRTR)
	var got []uint64
	var w RecvWQE
	for q.PopRecv(&w) {
		got = append(got, w.ID)
	}
	if !slices.Equal(got, []uint64{1, 2, 3, 4, 5}) {
		t.Fatalf("order after resize %v", got)
	}
	if err := srq.Modify(&SRQAttr{SRQLimit: 17}, SRQLimit); !errors.Is(err, ErrInvalidAttr) {
		t.Fatalf("limit above max_wr: %v", err)
	}
}
