package cq

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// MaxCQE is the largest number of entries a CQ may have, rxe's max_cqe.
const MaxCQE = 1<<15 - 1

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
	mu       sync.Mutex // serializes producers, Poll and the changes of ring
	ring     Ring
	toks     []Token // beside ring.Entries, freed by Poll; nil for a NewRing CQ, which frees on Push
	err      error   // ErrOverflow or ErrDestroyed once either happened
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

// New creates a CQ holding at least cqe completions (exactly cqe: gorxe does not round up).
func New(cqe int, opts Options) (*CQ, error) {
	if err := checkSize(cqe); err != nil {
		return nil, err
	}
	return newCQ(Ring{Header: new(RingHeader), Entries: make([]RingEntry, cqe)}, make([]Token, cqe), opts)
}

// NewRing creates a CQ whose completions go to r, polled by a consumer outside Go as Ring
// describes; the CQ holds len(r.Entries) completions. r's memory must stay valid until the CQ is
// destroyed, and its header starts zeroed.
func NewRing(r Ring, opts Options) (*CQ, error) {
	if r.Header == nil {
		return nil, fmt.Errorf("%w: ring without a header", ErrInvalidSize)
	}
	if err := checkSize(len(r.Entries)); err != nil {
		return nil, err
	}
	return newCQ(r, nil, opts)
}

func checkSize(cqe int) error {
	if cqe < 1 || cqe > MaxCQE {
		return fmt.Errorf("%w: %d not in 1..%d", ErrInvalidSize, cqe, MaxCQE)
	}
	return nil
}

func newCQ(r Ring, toks []Token, opts Options) (*CQ, error) {
	if opts.Channel != nil {
		if err := opts.Channel.attach(); err != nil {
			return nil, err
		}
	}
	return &CQ{ring: r, toks: toks, channel: opts.Channel, context: opts.Context, onError: opts.OnError,
		ended: make(chan struct{})}, nil
}

// Context returns Options.Context.
func (c *CQ) Context() any { return c.context }

// Channel returns the completion channel the CQ reports to, or nil.
func (c *CQ) Channel() *CompChannel { return c.channel }

// CQE returns the CQ's capacity (ibv_cq.cqe).
func (c *CQ) CQE() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.ring.Entries)
}

// Len returns the number of completions waiting to be polled.
func (c *CQ) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ring.Header.len()
}

// Err returns nil while the CQ works, ErrOverflow after an overrun and ErrDestroyed after Destroy.
func (c *CQ) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Poll moves up to len(wcs) completions, oldest first, into wcs and returns how many it moved
// (ibv_poll_cq). Each polled completion gives its work request's slot back to its queue (see
// Freed). It never blocks; a destroyed CQ polls empty. A NewRing CQ is polled by its consumer;
// Poll there only reads the ring as that consumer would.
func (c *CQ) Poll(wcs []WC) int {
	c.mu.Lock()
	h := c.ring.Header
	head := h.Head.Load()
	n := min(len(wcs), h.len())
	// Runs of completions of one queue free their slots with one atomic add.
	var run Token
	next := int(head % uint64(len(c.ring.Entries)))
	for i := range n {
		at := next
		if next++; next == len(c.ring.Entries) {
			next = 0
		}
		wcs[i] = c.ring.Entries[at].WC
		if c.toks == nil {
			continue
		}
		tok := c.toks[at]
		if tok.f != run.f {
			if run.f != nil {
				run.f.Add(run.n)
			}
			run = tok
		} else {
			run.n += tok.n
		}
	}
	if run.f != nil {
		run.f.Add(run.n)
	}
	h.Head.Store(head + uint64(n))
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
	h := c.ring.Header
	if h.len() >= len(c.ring.Entries) {
		c.err = ErrOverflow
		h.Overrun.Store(1)
		c.mu.Unlock()
		c.end()
		if c.onError != nil {
			c.onError(c)
		}
		return ErrOverflow
	}
	tail := h.Tail.Load()
	at := int(tail % uint64(len(c.ring.Entries)))
	e := &c.ring.Entries[at]
	*e = RingEntry{WC: *wc, Slots: uint32(tok.n)}
	if c.toks != nil {
		c.toks[at] = tok
	} else if tok.f != nil {
		tok.f.Add(tok.n) // the consumer counts e.Slots itself
	}
	h.Tail.Store(tail + 1)
	fire := h.fire(solicited, wc.Status)
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
	c.ring.Header.arm(solicitedOnly)
	return nil
}

// Resize changes the capacity to cqe, keeping queued completions in order (ibv_resize_cq). A
// NewRing CQ resizes with ResizeRing, since its memory is its consumer's.
func (c *CQ) Resize(cqe int) error {
	if err := checkSize(cqe); err != nil {
		return err
	}
	if c.toks == nil {
		return fmt.Errorf("%w: a CQ on a ring resizes with ResizeRing", ErrInvalidSize)
	}
	return c.resize(Ring{Header: new(RingHeader), Entries: make([]RingEntry, cqe)}, make([]Token, cqe))
}

// ResizeRing moves a NewRing CQ's completions, in order, to r, whose header starts zeroed; its
// consumer must not poll the old ring meanwhile and polls r from then on.
func (c *CQ) ResizeRing(r Ring) error {
	if r.Header == nil {
		return fmt.Errorf("%w: ring without a header", ErrInvalidSize)
	}
	if err := checkSize(len(r.Entries)); err != nil {
		return err
	}
	if c.toks != nil {
		return fmt.Errorf("%w: a CQ made by New resizes with Resize", ErrInvalidSize)
	}
	return c.resize(r, nil)
}

func (c *CQ) resize(r Ring, toks []Token) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	old := c.ring.Header
	n := old.len()
	if len(r.Entries) < n {
		return fmt.Errorf("%w: %d entries cannot hold the %d queued completions", ErrInvalidSize, len(r.Entries), n)
	}
	head := old.Head.Load()
	for i := range n {
		at := int((head + uint64(i)) % uint64(len(c.ring.Entries)))
		r.Entries[i] = c.ring.Entries[at]
		if toks != nil {
			toks[i] = c.toks[at]
		}
	}
	r.Header.Notify.Store(old.Notify.Load())
	r.Header.Tail.Store(uint64(n))
	c.ring, c.toks = r, toks
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
	h := c.ring.Header
	h.Notify.Store(RingNotifyNone)
	h.Head.Store(h.Tail.Load())
	if c.toks == nil {
		c.ring = Ring{Header: new(RingHeader)} // a NewRing CQ's memory is its consumer's to free now
	}
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
		n, err := c.ring.Header.len(), c.err
		if n == 0 && err == nil {
			c.ring.Header.arm(false)
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
