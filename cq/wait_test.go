package cq

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitAsync runs c.Wait on its own goroutine and returns where its result arrives.
func waitAsync(c *CQ) <-chan error {
	res := make(chan error, 1)
	go func() { res <- c.Wait(context.Background()) }()
	return res
}

func TestWaitReturnsForACompletion(t *testing.T) {
	c := mustNew(t, 4, Options{Channel: NewCompChannel(nil)})
	res := waitAsync(c)
	require.NoError(t, c.Push(wcID(7), false, Token{}))
	require.NoError(t, <-res)
	assert.Equal(t, int64(0), c.received.Load()-c.acked.Load(), "Wait leaves no event outstanding")
	require.NoError(t, c.Destroy(), "Destroy right after Wait")
}

// Destroy succeeds while Wait blocks and wakes it: the waiter gets ErrDestroyed whether it was
// already blocked or had not started yet.
func TestWaitWokenByDestroy(t *testing.T) {
	c := mustNew(t, 4, Options{Channel: NewCompChannel(nil)})
	res := waitAsync(c)
	require.NoError(t, c.Destroy())
	require.ErrorIs(t, <-res, ErrDestroyed)
}

// A shut-down channel ends a blocked Wait and GetEvent once the queued events are handed out.
func TestShutdownWakesWaiters(t *testing.T) {
	stop := make(chan struct{})
	ch := NewCompChannel(stop)
	c := mustNew(t, 4, Options{Channel: ch})
	waited := waitAsync(c)
	got := make(chan error, 1)
	go func() {
		_, err := ch.GetEvent(context.Background())
		got <- err
	}()
	close(stop)
	require.ErrorIs(t, <-waited, ErrShutdown)
	require.ErrorIs(t, <-got, ErrShutdown)

	require.NoError(t, c.ReqNotify(false))
	require.NoError(t, c.Push(wcID(1), false, Token{}))
	e, err := ch.GetEvent(context.Background())
	require.NoError(t, err, "an event queued after the shutdown is still handed out")
	require.Same(t, c, e)
	require.NoError(t, c.AckEvents(1))
	_, err = ch.GetEvent(context.Background())
	require.ErrorIs(t, err, ErrShutdown)
}

func TestWaitErrors(t *testing.T) {
	bare := mustNew(t, 4, Options{})
	require.ErrorIs(t, bare.Wait(context.Background()), ErrNoChannel)

	c := mustNew(t, 1, Options{Channel: NewCompChannel(nil)})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, c.Wait(ctx), context.Canceled)
	require.NoError(t, c.Push(wcID(1), false, Token{}))
	require.ErrorIs(t, c.Push(wcID(2), false, Token{}), ErrOverflow)
	require.NoError(t, c.Wait(ctx), "an overrun CQ still holds completions")
	c.Poll(make([]WC, 1))
	require.ErrorIs(t, c.Wait(ctx), ErrOverflow)
}

// An overflow ends every Wait, also one that no completion event will reach: of two waiters on a
// CQ, the first completion's event wakes one, and the CQ, no longer armed, then fills and
// overflows without another event.
func TestWaitWokenByOverflow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := mustNew(t, 2, Options{Channel: NewCompChannel(nil)})
		first, second := waitAsync(c), waitAsync(c)
		synctest.Wait() // both are blocked on the empty, armed CQ
		for i := range 3 {
			_ = c.Push(wcID(uint64(i)), false, Token{})
		}
		require.ErrorIs(t, c.Err(), ErrOverflow)
		for _, res := range []<-chan error{first, second} {
			// A waiter that finds the completions returns nil; none may stay blocked.
			if err := <-res; err != nil {
				require.ErrorIs(t, err, ErrOverflow)
			}
		}
	})
}
