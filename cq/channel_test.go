package cq

import (
	"context"
	"errors"
	"testing"
)

func TestGetEventContextCancel(t *testing.T) {
	ch := NewCompChannel()
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan error, 1)
	go func() {
		_, err := ch.GetEvent(ctx)
		res <- err
	}()
	cancel()
	if err := <-res; !errors.Is(err, context.Canceled) {
		t.Fatalf("GetEvent = %v, want context.Canceled", err)
	}
}

func TestGetEventWakesWaiter(t *testing.T) {
	ch := NewCompChannel()
	c := mustNew(t, 4, Options{Channel: ch, Context: "ctx"})
	got := make(chan *CQ, 1)
	go func() {
		e, err := ch.GetEvent(context.Background())
		if err != nil {
			t.Error(err)
		}
		got <- e
	}()
	_ = c.ReqNotify(false)
	_ = c.Push(wcID(1), false)
	e := <-got
	if e != c || e.Context() != "ctx" {
		t.Fatalf("event for %v", e)
	}
	if err := c.AckEvents(1); err != nil {
		t.Fatal(err)
	}
}

func TestEventsKeepArrivalOrderAndCount(t *testing.T) {
	ch := NewCompChannel()
	a := mustNew(t, 8, Options{Channel: ch})
	b := mustNew(t, 8, Options{Channel: ch})
	fire := func(c *CQ) {
		_ = c.ReqNotify(false)
		_ = c.Push(wcID(0), false)
	}
	fire(a)
	fire(b)
	fire(a)
	ctx := context.Background()
	want := []*CQ{a, b, a}
	for i, w := range want {
		got, err := ch.GetEvent(ctx)
		if err != nil || got != w {
			t.Fatalf("event %d: got %p err %v, want %p", i, got, err, w)
		}
	}
	if err := a.AckEvents(2); err != nil {
		t.Fatal(err)
	}
	if err := b.AckEvents(1); err != nil {
		t.Fatal(err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ch.GetEvent(done); !errors.Is(err, context.Canceled) {
		t.Fatalf("empty channel with done ctx = %v", err)
	}
}

func TestDestroyWakesWaiters(t *testing.T) {
	ch := NewCompChannel()
	res := make(chan error, 1)
	go func() {
		_, err := ch.GetEvent(context.Background())
		res <- err
	}()
	if err := ch.Destroy(); err != nil {
		t.Fatal(err)
	}
	if err := <-res; !errors.Is(err, ErrDestroyed) {
		t.Fatalf("GetEvent after destroy = %v", err)
	}
}

func TestRepeatedEventsOfOneCQ(t *testing.T) {
	ch := NewCompChannel()
	c := mustNew(t, 8, Options{Channel: ch})
	for range 3 {
		_ = c.ReqNotify(false)
		_ = c.Push(wcID(0), false)
	}
	if got := pending(ch); got != 3 {
		t.Fatalf("events = %d, want 3", got)
	}
}
