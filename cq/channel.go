package cq

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// CompChannel delivers completion events of the CQs created on it, like ibv_comp_channel: a CQ
// armed with ReqNotify queues one event when it fires, and GetEvent hands the events out in order.
// Queuing an event never allocates: a CQ with pending events sits once in an intrusive FIFO with a
// count.
type CompChannel struct {
	mu        sync.Mutex
	first     *CQ // FIFO of CQs with pendingEvents > 0
	last      *CQ
	cqs       int // CQs created on the channel and not destroyed
	destroyed bool
	ready     chan struct{}   // capacity 1: "the FIFO may be non-empty"
	done      chan struct{}   // closed by Destroy
	shutdown  <-chan struct{} // the owner's end of life; nil for none
}

// NewCompChannel creates a completion channel (ibv_create_comp_channel). shutdown, when not nil,
// is closed when the channel's owner goes away (a device's Close): from then on GetEvent hands out
// the events still queued and then fails with ErrShutdown instead of waiting for more, as reading a
// disassociated channel's file descriptor fails in libibverbs.
func NewCompChannel(shutdown <-chan struct{}) *CompChannel {
	return &CompChannel{ready: make(chan struct{}, 1), done: make(chan struct{}), shutdown: shutdown}
}

// GetEvent returns the CQ of the oldest completion event, waiting until one arrives or ctx ends
// (ibv_get_cq_event). A CQ is returned once per event; acknowledge it with CQ.AckEvents. Events
// already queued are returned even if ctx is done, so an expired context makes a non-blocking poll.
// It fails with ErrDestroyed once the channel is destroyed and with ErrShutdown once its owner
// shut it down and no event is left.
func (ch *CompChannel) GetEvent(ctx context.Context) (*CQ, error) {
	return ch.next(ctx, nil, false)
}

// TakeEvent is GetEvent for a consumer that counts acknowledgements itself, as the C library
// counts those of the program it serves: the event it returns needs no AckEvents, and Destroy
// never waits for it.
func (ch *CompChannel) TakeEvent(ctx context.Context) (*CQ, error) {
	return ch.next(ctx, nil, true)
}

// next takes the oldest event, waiting as GetEvent does; it also returns (nil, nil) when ended is
// closed (the CQ a Wait is for overflowed or was destroyed). acked takes the event as acknowledged at
// once, for a waiter that never hands it out, so Destroy never sees it outstanding.
func (ch *CompChannel) next(ctx context.Context, ended <-chan struct{}, acked bool) (*CQ, error) {
	for {
		ch.mu.Lock()
		if ch.destroyed {
			ch.mu.Unlock()
			return nil, ErrDestroyed
		}
		if c := ch.first; c != nil {
			ch.first = c.nextEvent
			c.nextEvent = nil
			if ch.first == nil {
				ch.last = nil
			}
			c.pendingEvents--
			if c.pendingEvents > 0 {
				ch.appendLocked(c)
			}
			more := ch.first != nil
			if !acked {
				c.received.Add(1)
			}
			ch.mu.Unlock()
			if more {
				ch.signal() // another waiter may take the next event
			}
			return c, nil
		}
		ch.mu.Unlock()
		select {
		case <-ch.ready:
		case <-ch.done:
		case <-ch.shutdown:
			// Events queued before the shutdown are still handed out.
			if ch.empty() {
				return nil, ErrShutdown
			}
		case <-ended:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// empty reports whether no event is queued.
func (ch *CompChannel) empty() bool {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return ch.first == nil
}

// Destroy releases the channel (ibv_destroy_comp_channel); it fails with ErrBusy while CQs created
// on it exist. Blocked GetEvent calls return ErrDestroyed.
func (ch *CompChannel) Destroy() error {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.destroyed {
		return ErrDestroyed
	}
	if ch.cqs > 0 {
		return fmt.Errorf("%w: %d CQs still use the channel", ErrBusy, ch.cqs)
	}
	ch.destroyed = true
	close(ch.done)
	return nil
}

func (ch *CompChannel) attach() error {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.destroyed {
		return ErrDestroyed
	}
	ch.cqs++
	return nil
}

// events counts the completion events queued on channels, process-wide (Events).
var events atomic.Uint64

// Events returns how many completion events have been queued on completion channels in this
// process so far. A completion wakes a goroutine only through its CQ's channel, so a reading
// that differs from an earlier one tells a runtime about to keep its processor busy that a
// goroutine may have been woken in between and wait for it; the same reading, that none was.
func Events() uint64 { return events.Load() }

// enqueue records one event of c.
func (ch *CompChannel) enqueue(c *CQ) {
	events.Add(1)
	ch.mu.Lock()
	c.pendingEvents++
	if c.pendingEvents == 1 {
		ch.appendLocked(c)
	}
	ch.mu.Unlock()
	ch.signal()
}

func (ch *CompChannel) appendLocked(c *CQ) {
	if ch.last == nil {
		ch.first = c
	} else {
		ch.last.nextEvent = c
	}
	ch.last = c
}

// forget drops the undelivered events of a destroyed CQ and detaches it.
func (ch *CompChannel) forget(c *CQ) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	ch.cqs--
	if c.pendingEvents == 0 {
		return
	}
	c.pendingEvents = 0
	var prev *CQ
	for p := ch.first; p != nil; prev, p = p, p.nextEvent {
		if p != c {
			continue
		}
		if prev == nil {
			ch.first = p.nextEvent
		} else {
			prev.nextEvent = p.nextEvent
		}
		if ch.last == p {
			ch.last = prev
		}
		p.nextEvent = nil
		return
	}
}

func (ch *CompChannel) signal() {
	select {
	case ch.ready <- struct{}{}:
	default:
	}
}
