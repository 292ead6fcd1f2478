package cq

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func wcID(id uint64) *WC { return &WC{WRID: id, Opcode: OpcodeRecv, ByteLen: uint32(id)} }

func mustNew(t *testing.T, cqe int, opts Options) *CQ {
	t.Helper()
	c, err := New(cqe, opts)
	require.NoError(t, err, "New(%d)", cqe)
	return c
}

func TestNewValidatesSize(t *testing.T) {
	for _, n := range []int{-1, 0, MaxCQE + 1} {
		if _, err := New(n, Options{}); !errors.Is(err, ErrInvalidSize) {
			t.Errorf("New(%d) = %v, want ErrInvalidSize", n, err)
		}
	}
	for _, n := range []int{1, MaxCQE} {
		c := mustNew(t, n, Options{})
		if c.CQE() != n {
			t.Errorf("CQE() = %d, want %d", c.CQE(), n)
		}
	}
}

func TestFIFOAcrossWrap(t *testing.T) {
	c := mustNew(t, 3, Options{})
	var out [2]WC
	next := uint64(0)
	want := uint64(0)
	for round := 0; round < 10; round++ {
		for range 2 {
			if err := c.Push(wcID(next), false); err != nil {
				t.Fatal(err)
			}
			next++
		}
		if n := c.Poll(out[:]); n != 2 {
			t.Fatalf("Poll = %d, want 2", n)
		}
		for _, wc := range out {
			if wc.WRID != want || wc.ByteLen != uint32(want) {
				t.Fatalf("got WRID %d, want %d", wc.WRID, want)
			}
			want++
		}
	}
	if c.Poll(out[:]) != 0 || c.Len() != 0 {
		t.Fatal("CQ not empty")
	}
}

func TestOverflowEntersErrorOnce(t *testing.T) {
	var raised []*CQ
	c := mustNew(t, 2, Options{OnError: func(c *CQ) { raised = append(raised, c) }})
	batch := []WC{*wcID(1), *wcID(2), *wcID(3)}
	n, err := c.PushBatch(batch, false)
	if n != 2 || !errors.Is(err, ErrOverflow) {
		t.Fatalf("PushBatch = %d, %v; want 2, ErrOverflow", n, err)
	}
	if len(raised) != 1 || raised[0] != c {
		t.Fatalf("OnError called %d times", len(raised))
	}
	if err := c.Push(wcID(4), false); !errors.Is(err, ErrOverflow) {
		t.Fatalf("push after overflow = %v", err)
	}
	if len(raised) != 1 {
		t.Fatal("OnError raised again")
	}
	if !errors.Is(c.Err(), ErrOverflow) {
		t.Fatalf("Err() = %v", c.Err())
	}
	// What was queued before the overrun can still be polled, in order.
	var out [4]WC
	if n := c.Poll(out[:]); n != 2 || out[0].WRID != 1 || out[1].WRID != 2 {
		t.Fatalf("poll after overflow: %d %v", n, out[:n])
	}
	if err := c.Resize(10); !errors.Is(err, ErrOverflow) {
		t.Fatalf("resize of a CQ in error = %v", err)
	}
}

// pending returns how many events the channel holds, without blocking.
func pending(ch *CompChannel) int {
	n := 0
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for {
		c, err := ch.GetEvent(ctx)
		if err != nil {
			return n
		}
		_ = c.AckEvents(1)
		n++
	}
}

func TestNotifySemantics(t *testing.T) {
	ok := func(id uint64) *WC { return wcID(id) }
	bad := func(id uint64) *WC { w := wcID(id); w.Status = WCRemAccessErr; return w }
	type push struct {
		wc        *WC
		solicited bool
	}
	cases := []struct {
		name   string
		arm    []bool // ReqNotify arguments (solicitedOnly), in order, before the pushes
		pushes []push
		events int
	}{
		{"unarmed", nil, []push{{ok(1), true}, {bad(2), false}}, 0},
		{"next fires once", []bool{false}, []push{{ok(1), false}, {ok(2), true}}, 1},
		{"solicited ignores unsolicited success", []bool{true}, []push{{ok(1), false}, {ok(2), false}}, 0},
		{"solicited fires on solicited", []bool{true}, []push{{ok(1), false}, {ok(2), true}, {ok(3), true}}, 1},
		{"solicited fires on error", []bool{true}, []push{{bad(1), false}}, 1},
		{"next overrides solicited", []bool{true, false}, []push{{ok(1), false}}, 1},
		{"solicited does not weaken next", []bool{false, true}, []push{{ok(1), false}}, 1},
		{"double arm is one event", []bool{false, false}, []push{{ok(1), false}, {ok(2), false}}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ch := NewCompChannel()
			c := mustNew(t, 16, Options{Channel: ch})
			for _, s := range tc.arm {
				if err := c.ReqNotify(s); err != nil {
					t.Fatal(err)
				}
			}
			for _, p := range tc.pushes {
				if err := c.Push(p.wc, p.solicited); err != nil {
					t.Fatal(err)
				}
			}
			if got := pending(ch); got != tc.events {
				t.Fatalf("events = %d, want %d", got, tc.events)
			}
		})
	}
}

func TestNotifyIgnoresAlreadyQueued(t *testing.T) {
	ch := NewCompChannel()
	c := mustNew(t, 4, Options{Channel: ch})
	_ = c.Push(wcID(1), true)
	_ = c.ReqNotify(false)
	if pending(ch) != 0 {
		t.Fatal("arming fired for a completion queued before it")
	}
	_ = c.Push(wcID(2), false)
	if pending(ch) != 1 {
		t.Fatal("no event for the next completion")
	}
}

func TestResizeKeepsOrder(t *testing.T) {
	c := mustNew(t, 4, Options{})
	for i := range uint64(4) {
		_ = c.Push(wcID(i), false)
	}
	var out [4]WC
	c.Poll(out[:2]) // head moves to 2 so the ring wraps after the next pushes
	_ = c.Push(wcID(4), false)
	_ = c.Push(wcID(5), false)
	if err := c.Resize(3); !errors.Is(err, ErrInvalidSize) {
		t.Fatalf("shrink below queued = %v", err)
	}
	if err := c.Resize(0); !errors.Is(err, ErrInvalidSize) {
		t.Fatalf("resize 0 = %v", err)
	}
	if err := c.Resize(8); err != nil {
		t.Fatal(err)
	}
	for i := uint64(6); i < 10; i++ {
		if err := c.Push(wcID(i), false); err != nil {
			t.Fatal(err)
		}
	}
	var all [16]WC
	n := c.Poll(all[:])
	if n != 8 {
		t.Fatalf("polled %d, want 8", n)
	}
	for i := range n {
		if all[i].WRID != uint64(i+2) {
			t.Fatalf("entry %d = %d", i, all[i].WRID)
		}
	}
}

func TestDestroyRules(t *testing.T) {
	ch := NewCompChannel()
	c := mustNew(t, 4, Options{Channel: ch})
	c.Attach()
	if err := c.Destroy(); !errors.Is(err, ErrBusy) {
		t.Fatalf("destroy with user = %v", err)
	}
	c.Detach()
	_ = c.ReqNotify(false)
	_ = c.Push(wcID(1), false)
	got, err := ch.GetEvent(context.Background())
	if err != nil || got != c {
		t.Fatalf("GetEvent = %v, %v", got, err)
	}
	if err := c.Destroy(); !errors.Is(err, ErrEventsNotAcked) {
		t.Fatalf("destroy with unacked event = %v", err)
	}
	if err := c.AckEvents(2); !errors.Is(err, ErrAckTooMany) {
		t.Fatalf("over-ack = %v", err)
	}
	if err := c.AckEvents(1); err != nil {
		t.Fatal(err)
	}
	if err := ch.Destroy(); !errors.Is(err, ErrBusy) {
		t.Fatalf("channel destroy with CQ = %v", err)
	}
	// An undelivered event is dropped with the CQ.
	_ = c.ReqNotify(false)
	_ = c.Push(wcID(2), false)
	if err := c.Destroy(); err != nil {
		t.Fatal(err)
	}
	if err := c.Destroy(); !errors.Is(err, ErrDestroyed) {
		t.Fatalf("second destroy = %v", err)
	}
	if err := c.Push(wcID(3), false); !errors.Is(err, ErrDestroyed) {
		t.Fatalf("push after destroy = %v", err)
	}
	if pending(ch) != 0 {
		t.Fatal("event of destroyed CQ delivered")
	}
	if err := ch.Destroy(); err != nil {
		t.Fatal(err)
	}
	if _, err := New(1, Options{Channel: ch}); !errors.Is(err, ErrDestroyed) {
		t.Fatalf("CQ on destroyed channel = %v", err)
	}
}
