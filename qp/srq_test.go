package qp

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSRQLimitEvent(t *testing.T) {
	e := newEnv(t)
	srq, err := e.table.CreateSRQ(e.pd, &SRQInitAttr{Attr: SRQAttr{MaxWR: 8, MaxSGE: 2}})
	require.NoError(t, err)
	q, _ := e.table.CreateQP(e.pd, &InitAttr{Type: TypeUD, SendCQ: e.cq(4), RecvCQ: e.cq(4), SRQ: srq, Cap: defaultCaps()})
	e.to(q, StateRTR)
	_ = srq.PostRecv([]RecvWR{{ID: 1}, {ID: 2}, {ID: 3}, {ID: 4}, {ID: 5}})
	require.NoError(t, srq.Modify(&SRQAttr{SRQLimit: 3}, SRQLimit))
	var w RecvWQE
	pop := func() uint64 {
		t.Helper()
		require.True(t, q.PopRecv(&w), "SRQ empty")
		return w.ID
	}
	pop() // 4 left
	pop() // 3 left: not below the limit yet
	require.Empty(t, e.events.types(), "event at the limit")
	pop() // 2 left: below
	require.Equal(t, []EventType{EventSRQLimitReached}, e.events.types(), "events")
	require.Same(t, srq, e.events.events[0].SRQ, "the event's SRQ")
	require.Zero(t, srq.Query().SRQLimit, "limit still armed after firing")
	pop()
	require.Len(t, e.events.types(), 1, "event fired twice")
	// Re-arm: fires again on the next drop below.
	_ = srq.Modify(&SRQAttr{SRQLimit: 2}, SRQLimit)
	require.Equal(t, uint64(5), pop(), "popped")
	require.Len(t, e.events.types(), 2, "re-armed limit did not fire")
	require.False(t, q.PopRecv(&w), "pop from empty SRQ")
}

func TestSRQModifyAndQuery(t *testing.T) {
	e := newEnv(t)
	_, err := e.table.CreateSRQ(e.pd, &SRQInitAttr{Attr: SRQAttr{MaxWR: 0}})
	require.ErrorIs(t, err, ErrInvalidCaps, "max_wr 0")
	_, err = e.table.CreateSRQ(e.pd, &SRQInitAttr{Attr: SRQAttr{MaxWR: 4, MaxSGE: 28}})
	require.ErrorIs(t, err, ErrInvalidCaps, "max_sge 28")
	_, err = e.table.CreateSRQ(e.pd, &SRQInitAttr{Attr: SRQAttr{MaxWR: 4, SRQLimit: 5}})
	require.ErrorIs(t, err, ErrInvalidAttr, "limit above max_wr")
	srq, _ := e.table.CreateSRQ(e.pd, &SRQInitAttr{Attr: SRQAttr{MaxWR: 4, MaxSGE: 1}})
	_ = srq.PostRecv([]RecvWR{{ID: 1, SGList: sge(10)}, {ID: 2}, {ID: 3}})
	require.ErrorIs(t, srq.PostRecv([]RecvWR{{ID: 4}, {ID: 5}}), ErrQueueFull, "full")
	require.ErrorIs(t, srq.Modify(&SRQAttr{MaxWR: 3}, SRQMaxWR), ErrInvalidCaps, "shrink below queued")
	require.NoError(t, srq.Modify(&SRQAttr{MaxWR: 16}, SRQMaxWR))
	require.Equal(t, SRQAttr{MaxWR: 16, MaxSGE: 1}, srq.Query(), "query")
	require.ErrorIs(t, srq.PostRecv([]RecvWR{{ID: 5, SGList: append(sge(1), sge(1)...)}}), ErrTooManySGE, "sges")
	_ = srq.PostRecv([]RecvWR{{ID: 5}})
	q, _ := e.table.CreateQP(e.pd, &InitAttr{Type: TypeRC, SendCQ: e.cq(4), RecvCQ: e.cq(4), SRQ: srq})
	e.to(q, StateRTR)
	var got []uint64
	var w RecvWQE
	for q.PopRecv(&w) {
		got = append(got, w.ID)
	}
	require.Equal(t, []uint64{1, 2, 3, 4, 5}, got, "order after resize")
	require.ErrorIs(t, srq.Modify(&SRQAttr{SRQLimit: 17}, SRQLimit), ErrInvalidAttr, "limit above max_wr")
}

// queueFeeder is an SRQFeeder over a slice the test appends to.
type queueFeeder struct{ queued []RecvWR }

func (f *queueFeeder) Feed() []RecvWR {
	wrs := f.queued
	f.queued = nil
	return wrs
}

func TestSRQFeeder(t *testing.T) {
	e := newEnv(t)
	srq, err := e.table.CreateSRQ(e.pd, &SRQInitAttr{Attr: SRQAttr{MaxWR: 8, MaxSGE: 1}})
	require.NoError(t, err)
	q, _ := e.table.CreateQP(e.pd, &InitAttr{Type: TypeUD, SendCQ: e.cq(4), RecvCQ: e.cq(8), SRQ: srq, Cap: defaultCaps()})
	e.to(q, StateRTR)
	f := &queueFeeder{}
	srq.SetFeeder(f)
	var w RecvWQE
	require.False(t, q.PopRecv(&w), "pop with nothing queued")

	// Queued work is taken by the pop that needs it, oldest first; a request the SRQ refuses
	// (two SGEs on a one-SGE SRQ) is dropped and the ones after it still go in.
	f.queued = []RecvWR{{ID: 1}, {ID: 2, SGList: append(sge(1), sge(1)...)}, {ID: 3}}
	require.True(t, q.PopRecv(&w))
	require.Equal(t, uint64(1), w.ID)
	require.Equal(t, 1, srq.Len(), "after one pop")

	// A post goes after what the feeder queued before it.
	f.queued = []RecvWR{{ID: 4}}
	require.NoError(t, srq.PostRecv([]RecvWR{{ID: 5}}))
	// Queued work counts for the limit: 3 waiting plus 2 queued, limit 4.
	f.queued = []RecvWR{{ID: 6}, {ID: 7}}
	require.NoError(t, srq.Modify(&SRQAttr{SRQLimit: 4}, SRQLimit))
	var got []uint64
	for q.PopRecv(&w) {
		got = append(got, w.ID)
		if len(got) == 1 {
			require.Empty(t, e.events.types(), "limit event with 4 left")
		}
	}
	require.Equal(t, []uint64{3, 4, 5, 6, 7}, got, "order")
	require.Equal(t, []EventType{EventSRQLimitReached}, e.events.types(), "events")

	// Without a feeder nothing is asked.
	srq.SetFeeder(nil)
	f.queued = []RecvWR{{ID: 8}}
	require.False(t, q.PopRecv(&w), "fed after SetFeeder(nil)")
}
