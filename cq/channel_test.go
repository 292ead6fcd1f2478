package cq

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGetEventContextCancel(t *testing.T) {
	ch := NewCompChannel(nil)
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan error, 1)
	go func() {
		_, err := ch.GetEvent(ctx)
		res <- err
	}()
	cancel()
	require.ErrorIs(t, <-res, context.Canceled)
}

func TestGetEventWakesWaiter(t *testing.T) {
	ch := NewCompChannel(nil)
	c := mustNew(t, 4, Options{Channel: ch, Context: "ctx"})
	got := make(chan *CQ, 1)
	go func() {
		e, err := ch.GetEvent(context.Background())
		assert.NoError(t, err)
		got <- e
	}()
	_ = c.ReqNotify(false)
	_ = c.Push(wcID(1), false, Token{})
	e := <-got
	require.Same(t, c, e, "event's CQ")
	require.Equal(t, "ctx", e.Context(), "event's CQ context")
	require.NoError(t, c.AckEvents(1))
}

func TestEventsKeepArrivalOrderAndCount(t *testing.T) {
	ch := NewCompChannel(nil)
	a := mustNew(t, 8, Options{Channel: ch})
	b := mustNew(t, 8, Options{Channel: ch})
	fire := func(c *CQ) {
		_ = c.ReqNotify(false)
		_ = c.Push(wcID(0), false, Token{})
	}
	fire(a)
	fire(b)
	fire(a)
	ctx := context.Background()
	want := []*CQ{a, b, a}
	for i, w := range want {
		got, err := ch.GetEvent(ctx)
		require.NoError(t, err, "event %d", i)
		require.Same(t, w, got, "event %d", i)
	}
	require.NoError(t, a.AckEvents(2))
	require.NoError(t, b.AckEvents(1))
	done, cancel := context.WithCancel(ctx)
	cancel()
	_, err := ch.GetEvent(done)
	require.ErrorIs(t, err, context.Canceled, "empty channel with done ctx")
}

func TestDestroyWakesWaiters(t *testing.T) {
	ch := NewCompChannel(nil)
	res := make(chan error, 1)
	go func() {
		_, err := ch.GetEvent(context.Background())
		res <- err
	}()
	require.NoError(t, ch.Destroy())
	require.ErrorIs(t, <-res, ErrDestroyed, "GetEvent after destroy")
}

func TestRepeatedEventsOfOneCQ(t *testing.T) {
	ch := NewCompChannel(nil)
	c := mustNew(t, 8, Options{Channel: ch})
	for range 3 {
		_ = c.ReqNotify(false)
		_ = c.Push(wcID(0), false, Token{})
	}
	require.Equal(t, 3, pending(ch), "events")
}

// TestTakeEvent: an event taken with TakeEvent needs no acknowledgement, so Destroy does not wait
// for it and AckEvents refuses one.
func TestTakeEvent(t *testing.T) {
	ch := NewCompChannel(nil)
	c := mustNew(t, 4, Options{Channel: ch})
	require.NoError(t, c.ReqNotify(false))
	require.NoError(t, c.Push(wcID(1), false, Token{}))
	got, err := ch.TakeEvent(context.Background())
	require.NoError(t, err)
	require.Same(t, c, got)
	require.ErrorIs(t, c.AckEvents(1), ErrAckTooMany)
	require.NoError(t, c.Destroy())
}

// Events counts the completion events queued on channels: a completion of an armed CQ queues
// one, one of a CQ nobody armed none.
func TestEventsCountsQueuedEvents(t *testing.T) {
	ch := NewCompChannel(nil)
	c := mustNew(t, 8, Options{Channel: ch})
	before := Events()
	require.NoError(t, c.Push(wcID(1), false, Token{}))
	assert.Equal(t, before, Events(), "a completion of a CQ nobody armed")
	require.NoError(t, c.ReqNotify(false))
	require.NoError(t, c.Push(wcID(2), false, Token{}))
	assert.Equal(t, before+1, Events(), "a completion of an armed CQ")
	require.NoError(t, c.Push(wcID(3), false, Token{}))
	assert.Equal(t, before+1, Events(), "the arm fires once")
}
