package qp

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
)

// QP is a queue pair (ibv_qp): its attributes and state machine, its send queue and, unless it
// uses an SRQ, its receive queue.
type QP struct {
	table   *Table
	pd      *mr.PD
	typ     Type
	qpn     uint32
	sendCQ  *cq.CQ
	recvCQ  *cq.CQ
	srq     *SRQ
	sigAll  bool
	caps    Caps
	context any

	mu        sync.Mutex // guards attr, state and destroyed; taken before sq.mu and rqMu
	attr      Attr
	destroyed bool
	// version counts changes of anything Query reports, so the transport re-reads attributes
	// only when they changed instead of on every packet.
	version atomic.Uint64
	// resets counts entries into RESET: a QP that went through RESET is a new connection even when
	// every attribute came back to its old value.
	resets atomic.Uint64

	sq      SendQueue
	rqMu    sync.Mutex
	rq      recvRing
	rqFreed cq.Freed // receive slots freed by polled completions (see cq.Freed)
	// rqState mirrors the QP state under rqMu for PostRecv.
	rqState  State
	rqClosed bool
	// rqEpoch counts entries into RESET under rqMu: an SRQ WQE popped before one is dropped by
	// the transport, and its slot freed, so its late completion is stale.
	rqEpoch uint64
	// srqHeld counts WQEs the transport popped from the SRQ and has not completed yet. Entering
	// ERR raises EventQPLastWQEReached only once they are completed (lastWQEPending meanwhile),
	// so a consumer that tears the QP down on the event has seen every one of their completions.
	srqHeld        int
	lastWQEPending bool
}

// CreateQP creates a QP in the RESET state (ibv_create_qp) and assigns its QP number.
func (t *Table) CreateQP(pd *mr.PD, init *InitAttr) (*QP, error) {
	if err := t.checkInit(init); err != nil {
		return nil, err
	}
	if init.SRQ != nil && init.SRQ.pd != pd {
		return nil, fmt.Errorf("%w: SRQ", ErrPDMismatch)
	}
	if err := pd.Acquire(); err != nil {
		return nil, err
	}
	caps := init.Cap
	if init.SRQ != nil {
		caps.MaxRecvWR, caps.MaxRecvSGE = 0, 0
	}
	q := &QP{
		table: t, pd: pd, typ: init.Type, sendCQ: init.SendCQ, recvCQ: init.RecvCQ, srq: init.SRQ,
		sigAll: init.SQSigAll, caps: caps, context: init.Context,
	}
	q.attr.Cap = caps
	q.sq.init(q, caps)
	q.rq = newRecvRing(caps.MaxRecvWR, caps.MaxRecvSGE)
	if err := t.insert(q); err != nil {
		pd.Release()
		return nil, err
	}
	q.sendCQ.Attach()
	q.recvCQ.Attach()
	if q.srq != nil {
		q.srq.users.Add(1)
	}
	return q, nil
}

// checkInit validates creation parameters against the device limits.
func (t *Table) checkInit(init *InitAttr) error {
	if !init.Type.valid() {
		return fmt.Errorf("%w: %d", ErrInvalidType, init.Type)
	}
	if init.SendCQ == nil || init.RecvCQ == nil {
		return ErrMissingCQ
	}
	l := &t.cfg.Limits
	c := &init.Cap
	checks := []struct {
		name  string
		v     int
		limit int
		skip  bool
	}{
		{"cap.max_send_wr", c.MaxSendWR, l.MaxQPWR, false},
		{"cap.max_send_sge", c.MaxSendSGE, l.MaxSendSGE, false},
		{"cap.max_inline_data", c.MaxInlineData, l.MaxInlineData, false},
		{"cap.max_recv_wr", c.MaxRecvWR, l.MaxQPWR, init.SRQ != nil},
		{"cap.max_recv_sge", c.MaxRecvSGE, l.MaxRecvSGE, init.SRQ != nil},
	}
	for _, ch := range checks {
		if !ch.skip && (ch.v < 0 || ch.v > ch.limit) {
			return &AttrError{Name: ch.name, Value: uint64(ch.v), Limit: fmt.Sprintf("in 0..%d", ch.limit), Err: ErrInvalidCaps}
		}
	}
	return nil
}

// QPN returns the QP number.
func (q *QP) QPN() uint32 { return q.qpn }

// Type returns the QP type.
func (q *QP) Type() Type { return q.typ }

// PD returns the protection domain the QP was created in.
func (q *QP) PD() *mr.PD { return q.pd }

// SendCQ returns the CQ send completions go to.
func (q *QP) SendCQ() *cq.CQ { return q.sendCQ }

// RecvCQ returns the CQ receive completions go to.
func (q *QP) RecvCQ() *cq.CQ { return q.recvCQ }

// SRQ returns the shared receive queue, or nil.
func (q *QP) SRQ() *SRQ { return q.srq }

// Context returns InitAttr.Context.
func (q *QP) Context() any { return q.context }

// SendQueue returns the send ring, for the transport.
func (q *QP) SendQueue() *SendQueue { return &q.sq }

// State returns the current state.
func (q *QP) State() State {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.attr.State
}

// AttrVersion returns a number that changes whenever anything Query reports changes: a Modify, an
// error state entered on the transport's behalf, the end of an SQD drain. Read it before Query;
// while it stays the same, a cached Query result is current.
func (q *QP) AttrVersion() uint64 { return q.version.Load() }

// ResetCount returns how many times the QP has entered RESET (by Modify or Destroy) since it was
// created. The transport compares it to notice a reconnection it did not see happen: RESET, then
// INIT, RTR and RTS again with the same PSNs, all between two of its calls. Read it before Query,
// like AttrVersion.
func (q *QP) ResetCount() uint64 { return q.resets.Load() }

// Query returns the QP's attributes and its creation parameters (ibv_query_qp with every bit set).
func (q *QP) Query() (Attr, InitAttr) {
	q.mu.Lock()
	a := q.attr
	q.mu.Unlock()
	a.CurState = a.State
	q.sq.mu.Lock()
	a.SQDraining = q.sq.draining
	q.sq.mu.Unlock()
	return a, InitAttr{
		Context: q.context, SendCQ: q.sendCQ, RecvCQ: q.recvCQ, SRQ: q.srq,
		Cap: q.caps, Type: q.typ, SQSigAll: q.sigAll,
	}
}

// Destroy removes the QP (ibv_destroy_qp). Outstanding work requests are dropped without
// completions; the QP number becomes free.
func (q *QP) Destroy() error {
	q.mu.Lock()
	if q.destroyed {
		q.mu.Unlock()
		return ErrDestroyed
	}
	q.destroyed = true
	q.setStateLocked(StateReset)
	q.sq.mu.Lock()
	q.sq.closed = true
	q.sq.mu.Unlock()
	q.rqMu.Lock()
	q.rqClosed = true
	q.rqMu.Unlock()
	q.mu.Unlock()
	q.table.remove(q)
	q.sendCQ.Detach()
	q.recvCQ.Detach()
	if q.srq != nil {
		q.srq.users.Add(-1)
	}
	q.pd.Release()
	return nil
}

// Destroyed reports whether Destroy was called; the transport drops a destroyed QP's state.
func (q *QP) Destroyed() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.destroyed
}

// RaiseEvent reports an affiliated asynchronous event of this QP, for the transport
// (EventCommEst, EventQPFatal, EventQPReqErr, EventQPAccessErr).
func (q *QP) RaiseEvent(t EventType) { q.raise(t) }

func (q *QP) raise(t EventType) { q.table.raise(Event{Type: t, QP: q}) }
