package cq

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
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
		_, err := New(n, Options{})
		assert.ErrorIs(t, err, ErrInvalidSize, "New(%d)", n)
	}
	for _, n := range []int{1, MaxCQE} {
		c := mustNew(t, n, Options{})
		assert.Equal(t, n, c.CQE(), "CQE() of New(%d)", n)
	}
}

func TestFIFOAcrossWrap(t *testing.T) {
	c := mustNew(t, 3, Options{})
	var out [2]WC
	next := uint64(0)
	want := uint64(0)
	for round := 0; round < 10; round++ {
		for range 2 {
			require.NoError(t, c.Push(wcID(next), false, Token{}))
			next++
		}
		require.Equal(t, 2, c.Poll(out[:]), "polled")
		for _, wc := range out {
			require.Equal(t, want, wc.WRID)
			require.Equal(t, uint32(want), wc.ByteLen)
			want++
		}
	}
	require.Zero(t, c.Poll(out[:]), "CQ not empty")
	require.Zero(t, c.Len(), "CQ not empty")
}

func TestOverflowEntersErrorOnce(t *testing.T) {
	var raised []*CQ
	c := mustNew(t, 2, Options{OnError: func(c *CQ) { raised = append(raised, c) }})
	require.NoError(t, c.Push(wcID(1), false, Token{}))
	require.NoError(t, c.Push(wcID(2), false, Token{}))
	require.ErrorIs(t, c.Push(wcID(3), false, Token{}), ErrOverflow, "push to a full CQ")
	require.Len(t, raised, 1, "OnError calls")
	require.Same(t, c, raised[0], "OnError's CQ")
	require.ErrorIs(t, c.Push(wcID(4), false, Token{}), ErrOverflow, "push after overflow")
	require.Len(t, raised, 1, "OnError raised again")
	require.ErrorIs(t, c.Err(), ErrOverflow)
	// What was queued before the overrun can still be polled, in order.
	var out [4]WC
	require.Equal(t, 2, c.Poll(out[:]), "poll after overflow")
	require.Equal(t, uint64(1), out[0].WRID, "poll after overflow")
	require.Equal(t, uint64(2), out[1].WRID, "poll after overflow")
	require.ErrorIs(t, c.Resize(10), ErrOverflow, "resize of a CQ in error")
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
			ch := NewCompChannel(nil)
			c := mustNew(t, 16, Options{Channel: ch})
			for _, s := range tc.arm {
				require.NoError(t, c.ReqNotify(s))
			}
			for _, p := range tc.pushes {
				require.NoError(t, c.Push(p.wc, p.solicited, Token{}))
			}
			require.Equal(t, tc.events, pending(ch), "events")
		})
	}
}

func TestNotifyIgnoresAlreadyQueued(t *testing.T) {
	ch := NewCompChannel(nil)
	c := mustNew(t, 4, Options{Channel: ch})
	_ = c.Push(wcID(1), true, Token{})
	_ = c.ReqNotify(false)
	require.Zero(t, pending(ch), "arming fired for a completion queued before it")
	_ = c.Push(wcID(2), false, Token{})
	require.Equal(t, 1, pending(ch), "events for the next completion")
}

func TestResizeKeepsOrder(t *testing.T) {
	c := mustNew(t, 4, Options{})
	for i := range uint64(4) {
		_ = c.Push(wcID(i), false, Token{})
	}
	var out [4]WC
	c.Poll(out[:2]) // head moves to 2 so the ring wraps after the next pushes
	_ = c.Push(wcID(4), false, Token{})
	_ = c.Push(wcID(5), false, Token{})
	require.ErrorIs(t, c.Resize(3), ErrInvalidSize, "shrink below queued")
	require.ErrorIs(t, c.Resize(0), ErrInvalidSize, "resize 0")
	require.NoError(t, c.Resize(8))
	for i := uint64(6); i < 10; i++ {
		require.NoError(t, c.Push(wcID(i), false, Token{}))
	}
	var all [16]WC
	n := c.Poll(all[:])
	require.Equal(t, 8, n, "polled")
	for i := range n {
		require.Equal(t, uint64(i+2), all[i].WRID, "entry %d", i)
	}
}

func TestDestroyRules(t *testing.T) {
	ch := NewCompChannel(nil)
	c := mustNew(t, 4, Options{Channel: ch})
	c.Attach()
	require.ErrorIs(t, c.Destroy(), ErrBusy, "destroy with user")
	c.Detach()
	_ = c.ReqNotify(false)
	_ = c.Push(wcID(1), false, Token{})
	got, err := ch.GetEvent(context.Background())
	require.NoError(t, err)
	require.Same(t, c, got, "event's CQ")
	require.ErrorIs(t, c.Destroy(), ErrEventsNotAcked, "destroy with unacked event")
	require.ErrorIs(t, c.AckEvents(2), ErrAckTooMany, "over-ack")
	require.NoError(t, c.AckEvents(1))
	require.ErrorIs(t, ch.Destroy(), ErrBusy, "channel destroy with CQ")
	// An undelivered event is dropped with the CQ.
	_ = c.ReqNotify(false)
	_ = c.Push(wcID(2), false, Token{})
	require.NoError(t, c.Destroy())
	require.ErrorIs(t, c.Destroy(), ErrDestroyed, "second destroy")
	require.ErrorIs(t, c.Push(wcID(3), false, Token{}), ErrDestroyed, "push after destroy")
	require.Zero(t, pending(ch), "event of destroyed CQ delivered")
	require.NoError(t, ch.Destroy())
	_, err = New(1, Options{Channel: ch})
	require.ErrorIs(t, err, ErrDestroyed, "CQ on destroyed channel")
}

// TestPollFreesSlots checks that each polled completion frees its token's slots, and only when it
// is polled: pushing, resizing and leaving completions queued free nothing.
func TestPollFreesSlots(t *testing.T) {
	c := mustNew(t, 8, Options{})
	var sq, rq Freed
	require.NoError(t, c.Push(wcID(1), false, sq.Token(3))) // a signaled WQE behind two unsignaled ones
	require.NoError(t, c.Push(wcID(2), false, sq.Token(1)))
	require.NoError(t, c.Push(wcID(3), false, rq.Token(1)))
	require.NoError(t, c.Push(wcID(4), false, Token{})) // flushed at post: held no slot
	require.NoError(t, c.Push(wcID(5), false, sq.Token(2)))
	assert.Zero(t, sq.Load(), "send slots freed before any poll")
	assert.Zero(t, rq.Load(), "receive slots freed before any poll")
	require.NoError(t, c.Resize(16))
	var out [8]WC
	require.Equal(t, 1, c.Poll(out[:1]))
	assert.Equal(t, uint64(3), sq.Load(), "send slots freed by the first completion")
	require.Equal(t, 3, c.Poll(out[:3]))
	assert.Equal(t, uint64(4), sq.Load(), "send slots freed after four completions")
	assert.Equal(t, uint64(1), rq.Load(), "receive slots freed after four completions")
	require.Equal(t, 1, c.Poll(out[:]))
	assert.Equal(t, uint64(6), sq.Load(), "send slots freed after every completion")
	assert.Equal(t, uint64(1), rq.Load(), "receive slots freed after every completion")
}
