package qp

import (
	"errors"

	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
)

// maxMessage is the longest message a work request may describe (rxe and IBTA: 2^31 bytes).
const maxMessage = 1 << 31

// PostSend validates and appends send work requests (ibv_post_send). It stops at the first bad one
// and returns a *PostError naming its index; earlier ones stay posted. Posting needs RTS, SQD
// (queued until RTS again), SQE or ERR (completed at once with WCWRFlushErr); RESET, INIT and RTR
// are rejected as rxe does. idle reports, read under the lock the post holds, that no WQE was in
// flight when it ended (every started one had completed), so the caller may start the requester
// on its own goroutine. It does not allocate.
func (q *QP) PostSend(wrs []SendWR) (idle bool, err error) {
	s := &q.sq
	s.mu.Lock()
	for i := range wrs {
		wr := &wrs[i]
		if s.closed {
			err = &PostError{Op: "post_send", Index: i, Err: ErrDestroyed}
			break
		}
		var ah *AH
		if ah, err = q.checkSendWR(s.state, wr); err != nil {
			err = &PostError{Op: "post_send", Index: i, Err: err}
			break
		}
		if s.state == StateErr || s.state == StateSQE {
			wc := cq.WC{WRID: wr.ID, Status: cq.WCWRFlushErr, Opcode: wr.Opcode.CompletionOpcode(), QPNum: q.qpn}
			_ = q.sendCQ.Push(&wc, false, cq.Token{}) // holds no slot
			continue
		}
		if s.full() {
			err = &PostError{Op: "post_send", Index: i, Err: ErrQueueFull}
			break
		}
		s.storeLocked(wr, ah)
	}
	idle = s.head == s.cursor
	s.mu.Unlock()
	return idle, err
}

// storeLocked copies wr, whose address handle resolved to ah (nil on connected QPs), into the
// tail slot.
func (s *SendQueue) storeLocked(wr *SendWR, ah *AH) {
	w := s.slot(s.tail)
	sges, inline := w.sges, w.inline
	w.WR = *wr
	w.AH = ah
	if wr.Flags&SendInline != 0 {
		w.WR.InlineData = inline[:copy(inline[:cap(inline)], wr.InlineData)]
		w.WR.SGList = sges[:0]
		w.Length = uint64(len(wr.InlineData))
	} else {
		w.WR.SGList = sges[:copy(sges[:cap(sges)], wr.SGList)]
		w.WR.InlineData = inline[:0]
		w.Length = mr.SGEsLength(wr.SGList)
	}
	if wr.Opcode == WRAtomicWrite {
		w.Length = 8
	}
	w.sges, w.inline = sges, inline
	w.Index = s.tail
	w.Progress = Progress{}
	s.tail++
}

// checkSendWR applies rxe's post-time checks and returns the AH a datagram QP's wr is addressed
// with (nil on connected QPs). Errors are bare sentinels (no allocation) except in
// the rare detailed cases.
func (q *QP) checkSendWR(state State, wr *SendWR) (*AH, error) {
	if state < StateRTS {
		return nil, ErrInvalidState
	}
	in := wr.Opcode.info()
	if in == nil || in.types&(1<<q.typ) == 0 {
		return nil, ErrInvalidOpcode
	}
	inline := wr.Flags&SendInline != 0
	var length uint64
	if inline {
		if !in.inline || len(wr.SGList) != 0 {
			return nil, ErrInvalidWR
		}
		if len(wr.InlineData) > q.caps.MaxInlineData {
			return nil, ErrInlineTooLong
		}
		length = uint64(len(wr.InlineData))
	} else {
		if len(wr.InlineData) != 0 {
			return nil, ErrInvalidWR
		}
		if len(wr.SGList) > q.caps.MaxSendSGE {
			return nil, ErrTooManySGE
		}
		length = mr.SGEsLength(wr.SGList)
	}
	if length > maxMessage {
		return nil, ErrMessageTooLong
	}
	switch {
	case in.atomic:
		if length != 8 || wr.Atomic.RemoteAddr&7 != 0 {
			return nil, ErrInvalidWR
		}
	case wr.Opcode == WRAtomicWrite:
		if wr.RDMA.RemoteAddr&7 != 0 {
			return nil, ErrInvalidWR
		}
	case wr.Opcode == WRFlush:
		if wr.Flush.Type == 0 || wr.Flush.Type&^(FlushGlobal|FlushPersistent) != 0 || wr.Flush.Level > mr.FlushMR {
			return nil, ErrInvalidWR
		}
	}
	var ah *AH
	if q.typ.datagram() {
		ah = q.table.resolveAH(wr.UD.AH)
		if ah == nil || ah.destroyed.Load() {
			return nil, ErrInvalidAH
		}
		if ah.pd != q.pd {
			return nil, ErrPDMismatch
		}
		if wr.UD.RemoteQPN > packet.QPNMask {
			return nil, ErrInvalidWR
		}
		if q.typ == TypeGSI && int(wr.UD.PKeyIndex) >= q.table.cfg.Limits.MaxPKeys {
			return nil, ErrInvalidWR
		}
		if q.typ == TypeUD && length > uint64(maxUDPayload(q)) {
			return nil, ErrMessageTooLong
		}
	}
	return ah, nil
}

// maxUDPayload is the largest UD message: one packet of the device's largest MTU (the path MTU is
// checked by the transport when it sends, as the port MTU may change).
func maxUDPayload(q *QP) int { return q.table.cfg.Limits.MaxMTU.Bytes() }

// PostRecv appends receive work requests (ibv_post_recv). A QP on an SRQ rejects it; RESET
// rejects it; in ERR the requests complete at once with WCWRFlushErr. It does not allocate.
func (q *QP) PostRecv(wrs []RecvWR) error {
	q.rqMu.Lock()
	defer q.rqMu.Unlock()
	for i := range wrs {
		var err error
		switch {
		case q.rqClosed:
			err = ErrDestroyed
		case q.srq != nil:
			err = ErrHasSRQ
		case q.rqState == StateReset:
			err = ErrInvalidState
		case len(wrs[i].SGList) > q.caps.MaxRecvSGE:
			err = ErrTooManySGE
		case q.rqState == StateErr:
			wc := cq.WC{WRID: wrs[i].ID, Status: cq.WCWRFlushErr, Opcode: cq.OpcodeRecv, QPNum: q.qpn}
			_ = q.recvCQ.Push(&wc, false, cq.Token{}) // holds no slot
			continue
		case q.rq.full(&q.rqFreed):
			err = ErrQueueFull
		}
		if err != nil {
			return &PostError{Op: "post_recv", Index: i, Err: err}
		}
		q.rq.push(&wrs[i])
	}
	return nil
}

// PopRecv hands the transport the next receive WQE, from the SRQ if the QP has one: it copies the
// WQE into dst and returns false when none is posted (RNR). Receive WQEs are only handed out in
// RTR, RTS, SQD and SQE.
func (q *QP) PopRecv(dst *RecvWQE) bool {
	q.rqMu.Lock()
	defer q.rqMu.Unlock()
	if q.rqState < StateRTR || q.rqState == StateErr {
		return false
	}
	if q.srq != nil {
		if !q.srq.pop(dst) { // lock order: receive queue, then SRQ
			return false
		}
		dst.epoch = q.rqEpoch
		q.srqHeld++
		return true
	}
	if !q.rq.pop(dst) {
		return false
	}
	dst.fromSRQ = false
	return true
}

// FailRecv completes w with wc, an error completion, and moves the QP to ERR in the same step, as
// SendQueue.Fail does for sends: the WQEs flushed behind it follow its WC, and whoever polls it
// finds the QP in ERR. It returns the state the QP left, whether it moved, and CompleteRecv's
// errors (with ErrStale the QP is left alone).
func (q *QP) FailRecv(w *RecvWQE, wc *cq.WC) (from State, moved bool, err error) {
	q.mu.Lock() // held until the state has changed: QP.State and Query wait on it
	defer q.mu.Unlock()
	err = q.CompleteRecv(w, wc, false)
	if errors.Is(err, ErrStale) {
		return q.attr.State, false, err
	}
	from, moved = q.enterErrorLocked(false)
	return from, moved, err
}

// CompleteRecv reports a receive WQE popped with PopRecv as done: it fills wc.WRID and wc.QPNum
// and pushes wc to the receive CQ; solicited is the message's solicited event bit. WQEs of the
// QP's own receive queue complete in the order they were popped; one that a flush or reset already
// completed or dropped returns ErrStale and is dropped. The WQE's slot (in the receive queue or
// the SRQ) frees when its completion is polled. On CQ overflow the CQ's error is returned and the
// transport should move the QP to ERR.
func (q *QP) CompleteRecv(w *RecvWQE, wc *cq.WC, solicited bool) error {
	wc.WRID, wc.QPNum = w.ID, q.qpn
	q.rqMu.Lock()
	if w.fromSRQ {
		if w.epoch != q.rqEpoch {
			q.rqMu.Unlock()
			return ErrStale // the QP went through RESET, which freed the WQE's slot
		}
		err := pushRecv(q.recvCQ, wc, solicited, &q.srq.freed)
		// The completion goes in before the held count drops, so the event it may release
		// follows it.
		q.srqHeld--
		last := q.srqHeld == 0 && q.lastWQEPending
		if last {
			q.lastWQEPending = false
		}
		q.rqMu.Unlock()
		if last {
			q.raise(EventQPLastWQEReached)
		}
		return err
	}
	defer q.rqMu.Unlock()
	if w.index != q.rq.head || q.rq.head == q.rq.cursor {
		return ErrStale
	}
	q.rq.head++
	return pushRecv(q.recvCQ, wc, solicited, &q.rqFreed)
}

// pushRecv delivers a receive completion whose polling frees one slot of freed; a completion the
// CQ refuses is lost, so the slot is freed at once.
func pushRecv(c *cq.CQ, wc *cq.WC, solicited bool, freed *cq.Freed) error {
	err := c.Push(wc, solicited, freed.Token(1))
	if err != nil {
		freed.Add(1)
	}
	return err
}
