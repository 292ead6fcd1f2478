package cq

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// MaxCQE is the largest number of entries a CQ may have, rxe's max_cqe.
const MaxCQE = 1<<15 - 1

// notifyMode is what ReqNotify armed.
type notifyMode uint8

const (
	notifyNone      notifyMode = iota
	notifySolicited            // next solicited or error completion
	notifyNext                 // next completion of any kind
)

// Options are the creation parameters of a CQ besides its size.
type Options struct {
	// Channel receives the CQ's completion events; nil means ReqNotify arms nothing observable.
	Channel *CompChannel
	// Context is returned by CQ.Context, like ibv_create_cq's cq_context; the facade keeps its
	// public CQ there, which completion events name.
	Context any
	// OnError is called once, when the CQ overflows and enters the error state, so the device can
	// raise IBV_EVENT_CQ_ERR. It may run with the caller's queue locks held: it must only record or
	// hand off the event, never block or call back into CQs or QPs.
	OnError func(*CQ)
}

// CQ is a completion queue: a bounded FIFO of work completions filled by the transport and drained
// by Poll. All methods are safe for concurrent use; Push and Poll do not allocate.
type CQ struct {
	mu       sync.Mutex
	ring     []entry
	head     int // index of the oldest completion
	count    int
	notify   notifyMode
	err      error // ErrOverflow or ErrDestroyed once either happened
	channel  *CompChannel
	context  any
	onError  func(*CQ)
	users    atomic.Int32 // QPs (and SRQs) that complete into this CQ
	received atomic.Int64 // events GetEvent returned for this CQ
	acked    atomic.Int64
	ended    chan struct{} // closed once the CQ completes nothing more (overflow, Destroy), waking Wait
	endOnce  sync.Once

	// Owned by channel.mu: events waiting in the channel and the channel's FIFO link.
	pendingEvents int
	nextEvent     *CQ
}

// entry is one queued completion and the token that gives its work queue's slots back when it is
// polled.
type entry struct {
	wc  WC
	tok Token
}

// New creates a CQ holding at least cqe completions (exactly cqe: gorxe does not round up).
func New(cqe int, opts Options) (*CQ, error) {
	if cqe < 1 || cqe > MaxCQE {
		return nil, fmt.Errorf("%w: %d not in 1..%d", ErrInvalidSize, cqe, MaxCQE)
	}
	if opts.Channel != nil {
		if err := opts.Channel.attach(); err != nil {
			return nil, err
		}
	}
	return &CQ{
		ring:    make([]entry, cqe),
		channel: opts.Channel,
		context: opts.Context,
		onError: opts.OnError,
		ended:   make(chan struct{}),
	}, nil
}

// Context returns Options.Context.
func (c *CQ) Context() any { return c.context }

// Channel returns the completion channel the CQ reports to, or nil.
func (c *CQ) Channel() *CompChannel { return c.channel }

// CQE returns the CQ's capacity (ibv_cq.cqe).
func (c *CQ) CQE() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.ring)
}

// Len returns the number of completions waiting to be polled.
func (c *CQ) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.count
}

// Err returns nil while the CQ works, ErrOverflow after an overrun and ErrDestroyed after Destroy.
func (c *CQ) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Poll moves up to len(wcs) completions, oldest first, into wcs and returns how many it moved
// (ibv_poll_cq). Each polled completion gives its work request's slot back to its queue (see
// Freed). It never blocks; a destroyed CQ polls empty.
func (c *CQ) Poll(wcs []WC) int {
	c.mu.Lock()
	n := min(len(wcs), c.count)
	// Runs of completions of one queue free their slots with one atomic add.
	var run Token
	for i := range n {
		e := &c.ring[c.head]
		wcs[i] = e.wc
		if e.tok.f != run.f {
			if run.f != nil {
				run.f.Add(run.n)
			}
			run = e.tok
		} else {
			run.n += e.tok.n
		}
		c.head++
		if c.head == len(c.ring) {
			c.head = 0
		}
	}
	if run.f != nil {
		run.f.Add(run.n)
	}
	c.count -= n
	c.mu.Unlock()
	return n
}

// Push appends one completion with the token that frees its work request's slot when it is
// polled. solicited says the completion comes from a message whose solicited event bit was set;
// together with the status it decides whether a solicited-only notification fires. It returns
// ErrOverflow if the CQ is full or already in error, ErrDestroyed after Destroy; the completion is
// then lost and the caller frees the slot itself. On overflow the CQ enters the error state.
func (c *CQ) Push(wc *WC, solicited bool, tok Token) error {
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
	}
	if c.count == len(c.ring) {
		c.err = ErrOverflow
		c.mu.Unlock()
		c.end()
		if c.onError != nil {
			c.onError(c)
		}
		return ErrOverflow
	}
	tail := c.head + c.count
	if tail >= len(c.ring) {
		tail -= len(c.ring)
	}
	e := &c.ring[tail]
	e.wc, e.tok = *wc, tok
	c.count++
	fire := c.notify == notifyNext || (c.notify != notifyNone && (solicited || wc.Status != WCSuccess))
	if fire {
		c.notify = notifyNone
	}
	c.mu.Unlock()
	if fire && c.channel != nil {
		c.channel.enqueue(c)
	}
	return nil
}

// ReqNotify arms the CQ to generate one completion event (ibv_req_notify_cq): on the next
// completion, or with solicitedOnly on the next solicited or unsuccessful completion. The event
// fires once and must be re-armed. Arming for any completion overrides a solicited-only arm until
// it fires; completions already queued do not fire it.
func (c *CQ) ReqNotify(solicitedOnly bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == ErrDestroyed {
		return ErrDestroyed
	}
	switch {
	case !solicitedOnly:
		c.notify = notifyNext
	case c.notify == notifyNone:
		c.notify = notifySolicited
	}
	return nil
}

// Resize changes the capacity to cqe, keeping queued completions in order (ibv_resize_cq).
func (c *CQ) Resize(cqe int) error {
	if cqe < 1 || cqe > MaxCQE {
		return fmt.Errorf("%w: %d not in 1..%d", ErrInvalidSize, cqe, MaxCQE)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	if cqe < c.count {
		return fmt.Errorf("%w: %d entries cannot hold the %d queued completions", ErrInvalidSize, cqe, c.count)
	}
	ring := make([]entry, cqe)
	for i := range c.count {
		ring[i] = c.ring[(c.head+i)%len(c.ring)]
	}
	c.ring, c.head = ring, 0
	return nil
}

// AckEvents acknowledges n completion events that GetEvent returned for this CQ
// (ibv_ack_cq_events). Destroy refuses while events are unacknowledged.
func (c *CQ) AckEvents(n int) error {
	for {
		acked := c.acked.Load()
		if n < 0 || acked+int64(n) > c.received.Load() {
			return fmt.Errorf("%w: %d more than the %d outstanding", ErrAckTooMany, n, c.received.Load()-acked)
		}
		if c.acked.CompareAndSwap(acked, acked+int64(n)) {
			return nil
		}
	}
}

// Attach records that a QP or SRQ completes into this CQ; Destroy fails until Detach.
func (c *CQ) Attach() { c.users.Add(1) }

// Detach undoes one Attach.
func (c *CQ) Detach() { c.users.Add(-1) }

// Destroy releases the CQ (ibv_destroy_cq). It fails with ErrBusy while QPs are attached and with
// ErrEventsNotAcked while GetEvent results are unacknowledged. Undelivered events are dropped, and
// a Wait blocked on the CQ returns ErrDestroyed.
func (c *CQ) Destroy() error {
	if c.users.Load() > 0 {
		return fmt.Errorf("%w: %d queue pairs still use the CQ", ErrBusy, c.users.Load())
	}
	if c.received.Load() != c.acked.Load() {
		return ErrEventsNotAcked
	}
	c.mu.Lock()
	if c.err == ErrDestroyed {
		c.mu.Unlock()
		return ErrDestroyed
	}
	c.err = ErrDestroyed
	c.notify = notifyNone
	c.count = 0
	c.mu.Unlock()
	c.end()
	if c.channel != nil {
		c.channel.forget(c)
	}
	return nil
}

// Wait blocks until the CQ holds a completion to Poll, the CQ fails (ErrOverflow, ErrDestroyed),
// its channel is destroyed or shut down, or ctx ends. It arms the CQ under the lock that shows it
// empty, so no completion can slip between the check and the arming, and takes the channel's
// events as acknowledged: they never reach the caller, so Destroy never finds them outstanding.
// The channel's events of other CQs are consumed too; a CQ that is waited on needs a channel of its
// own. It fails with ErrNoChannel on a CQ without a channel.
func (c *CQ) Wait(ctx context.Context) error {
	if c.channel == nil {
		return ErrNoChannel
	}
	for {
		c.mu.Lock()
		n, err := c.count, c.err
		if n == 0 && err == nil {
			c.notify = notifyNext
		}
		c.mu.Unlock()
		switch {
		case n > 0:
			return nil
		case err != nil:
			return err
		}
		// A closed c.ended wakes the wait without an error: the loop then reads why.
		if _, err := c.channel.next(ctx, c.ended, true); err != nil {
			return err
		}
	}
}

// end wakes every Wait: the CQ overflowed or was destroyed, so no completion will come.
func (c *CQ) end() { c.endOnce.Do(func() { close(c.ended) }) }
