package qp

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
)

// SRQAttr are the attributes of an SRQ (struct ibv_srq_attr).
type SRQAttr struct {
	MaxWR    int
	MaxSGE   int
	SRQLimit int // armed low-water mark; 0 means not armed
}

// SRQAttrMask selects what ModifySRQ changes (enum ibv_srq_attr_mask).
type SRQAttrMask uint8

// SRQ attribute mask bits.
const (
	SRQMaxWR SRQAttrMask = 1 << 0 // IBV_SRQ_MAX_WR: resize
	SRQLimit SRQAttrMask = 1 << 1 // IBV_SRQ_LIMIT: arm the limit event
)

// SRQInitAttr are an SRQ's creation parameters (struct ibv_srq_init_attr).
type SRQInitAttr struct {
	Context any // returned by SRQ.Context (srq_context); the facade keeps its public SRQ there
	Attr    SRQAttr
}

// SRQ is a shared receive queue (ibv_srq): receive WQEs consumed by every QP created on it.
type SRQ struct {
	table     *Table
	pd        *mr.PD
	context   any
	users     atomic.Int32
	mu        sync.Mutex
	ring      recvRing
	freed     cq.Freed // slots freed by polled completions (see cq.Freed)
	maxSGE    int
	limit     int
	destroyed bool
	feeder    SRQFeeder // guarded by mu
}

// An SRQFeeder supplies an SRQ with receive work requests its program queues outside Go (the C
// library's ibv_post_srq_recv writes them into a ring in C memory). The SRQ takes them before
// anything reads its queue: a pop for an arriving message, a post, a query, a resize. So a WQE
// queued there counts, for the limit event too, exactly as if it had been posted, and a post
// needs no call into Go.
type SRQFeeder interface {
	// Feed returns the work requests queued since the last call, oldest first. It runs under
	// the SRQ's lock, so calls never overlap; the slice stays the feeder's and is read before
	// the next call. A request the SRQ refuses as PostRecv would is dropped, so the feeder
	// checks them first.
	Feed() []RecvWR
}

// CreateSRQ creates a shared receive queue (ibv_create_srq). A non-zero SRQLimit arms the limit
// event at once.
func (t *Table) CreateSRQ(pd *mr.PD, init *SRQInitAttr) (*SRQ, error) {
	a := &init.Attr
	l := &t.cfg.Limits
	if a.MaxWR < 1 || a.MaxWR > l.MaxSRQWR {
		return nil, &AttrError{Name: "max_wr", Value: uint64(a.MaxWR), Limit: fmt.Sprintf("in 1..%d", l.MaxSRQWR), Err: ErrInvalidCaps}
	}
	if a.MaxSGE < 0 || a.MaxSGE > l.MaxSRQSGE {
		return nil, &AttrError{Name: "max_sge", Value: uint64(a.MaxSGE), Limit: fmt.Sprintf("in 0..%d", l.MaxSRQSGE), Err: ErrInvalidCaps}
	}
	if a.SRQLimit < 0 || a.SRQLimit > a.MaxWR {
		return nil, attrErr("srq_limit", uint64(a.SRQLimit), fmt.Sprintf("in 0..%d (max_wr)", a.MaxWR))
	}
	if err := pd.Acquire(); err != nil {
		return nil, err
	}
	return &SRQ{
		table: t, pd: pd, context: init.Context, ring: newRecvRing(a.MaxWR, a.MaxSGE),
		maxSGE: a.MaxSGE, limit: a.SRQLimit,
	}, nil
}

// Context returns SRQInitAttr.Context.
func (s *SRQ) Context() any { return s.context }

// PD returns the SRQ's protection domain.
func (s *SRQ) PD() *mr.PD { return s.pd }

// SetFeeder makes f supply the SRQ's work requests from now on, beside PostRecv (nil stops it).
func (s *SRQ) SetFeeder(f SRQFeeder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.feeder = f
}

// PostRecv appends receive work requests (ibv_post_srq_recv); see PostError for partial posts.
// What the feeder queued was posted first, so it goes first.
func (s *SRQ) PostRecv(wrs []RecvWR) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.feedLocked()
	return s.pushLocked(wrs)
}

// pushLocked appends wrs with s.mu held.
func (s *SRQ) pushLocked(wrs []RecvWR) error {
	for i := range wrs {
		if s.destroyed {
			return &PostError{Op: "post_srq_recv", Index: i, Err: ErrDestroyed}
		}
		if len(wrs[i].SGList) > s.maxSGE {
			return &PostError{Op: "post_srq_recv", Index: i, Err: ErrTooManySGE}
		}
		if s.ring.full(&s.freed) {
			return &PostError{Op: "post_srq_recv", Index: i, Err: ErrQueueFull}
		}
		s.ring.push(&wrs[i])
	}
	return nil
}

// feedLocked appends what the feeder queued, with s.mu held; a request the SRQ refuses is
// dropped and the ones after it still go in.
func (s *SRQ) feedLocked() {
	if s.feeder == nil {
		return
	}
	wrs := s.feeder.Feed()
	for len(wrs) > 0 {
		err := s.pushLocked(wrs)
		var pe *PostError
		if !errors.As(err, &pe) {
			return
		}
		wrs = wrs[pe.Index+1:]
	}
}

// pop hands the oldest WQE to a QP for good and fires the armed limit event when the number of
// WQEs left drops below the limit (once; the limit disarms).
func (s *SRQ) pop(dst *RecvWQE) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.feedLocked()
	if !s.ring.pop(dst) {
		return false
	}
	s.ring.head = s.ring.cursor
	dst.fromSRQ = true
	if s.limit > 0 && s.ring.waiting() < uint64(s.limit) {
		s.limit = 0
		s.table.raise(Event{Type: EventSRQLimitReached, SRQ: s})
	}
	return true
}

// Modify resizes the SRQ and/or arms its limit (ibv_modify_srq). A resize keeps the queued WQEs
// and may not go below them or below an armed limit; MaxSGE cannot change.
func (s *SRQ) Modify(attr *SRQAttr, mask SRQAttrMask) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.destroyed {
		return ErrDestroyed
	}
	s.feedLocked() // a resize may not go below what the feeder holds
	if mask&^(SRQMaxWR|SRQLimit) != 0 {
		return attrErr("srq_attr_mask", uint64(mask), "a subset of MAX_WR|LIMIT")
	}
	l := &s.table.cfg.Limits
	maxWR := s.ring.size()
	if mask&SRQMaxWR != 0 {
		queued := int(s.ring.waiting())
		if attr.MaxWR < max(1, queued) || attr.MaxWR > l.MaxSRQWR {
			return &AttrError{Name: "max_wr", Value: uint64(attr.MaxWR),
				Limit: fmt.Sprintf("in %d..%d (queued WQEs..max_srq_wr)", max(1, queued), l.MaxSRQWR), Err: ErrInvalidCaps}
		}
		maxWR = attr.MaxWR
	}
	limit := s.limit
	if mask&SRQLimit != 0 {
		limit = attr.SRQLimit
	}
	if limit < 0 || limit > maxWR {
		return attrErr("srq_limit", uint64(limit), fmt.Sprintf("in 0..%d (max_wr)", maxWR))
	}
	if maxWR != s.ring.size() {
		s.ring.resize(maxWR, s.maxSGE)
	}
	s.limit = limit
	return nil
}

// Query returns the SRQ's attributes (ibv_query_srq).
func (s *SRQ) Query() SRQAttr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return SRQAttr{MaxWR: s.ring.size(), MaxSGE: s.maxSGE, SRQLimit: s.limit}
}

// Len returns the number of receive WQEs waiting.
func (s *SRQ) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.feedLocked()
	return int(s.ring.waiting())
}

// Destroy releases the SRQ (ibv_destroy_srq); it fails with ErrBusy while QPs use it.
func (s *SRQ) Destroy() error {
	if n := s.users.Load(); n > 0 {
		return fmt.Errorf("%w: %d QPs use the SRQ", ErrBusy, n)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.destroyed {
		return ErrDestroyed
	}
	s.destroyed = true
	s.feeder = nil // its memory may go once Destroy returns
	s.pd.Release()
	return nil
}
