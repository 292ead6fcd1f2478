package qp

import (
	"fmt"
	"math/bits"

	"github.com/gorxe/gorxe/packet"
)

// Modify changes attributes and state (ibv_modify_qp). The mask is checked against the IBTA state
// table for the QP type (*ModifyError names a missing or disallowed attribute), every selected
// value against its range and the device limits (*AttrError), a path against the device's
// addresses (Config.Route: *AttrError for ErrInvalidGIDIndex when the source GID has no local
// address of the destination's family), then all of it is applied at once:
// nothing changes when an error is returned. Entering ERR flushes both queues before Modify
// returns; entering SQD starts a drain that ends with EventSQDrained.
func (q *QP) Modify(attr *Attr, mask AttrMask) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.modifyLocked(attr, mask)
}

func (q *QP) modifyLocked(attr *Attr, mask AttrMask) error {
	if q.destroyed {
		return ErrDestroyed
	}
	from := q.attr.State
	to := from
	if mask&AttrState != 0 {
		to = attr.State
	}
	if mask&AttrCurState != 0 && attr.CurState != from {
		return &ModifyError{Type: q.typ, From: from, To: to, Err: fmt.Errorf("%w: given %v", ErrCurState, attr.CurState)}
	}
	if err := checkTransition(q.typ, from, to, mask); err != nil {
		return err
	}
	if from == StateSQD && to != StateErr && q.sqDraining() {
		return &ModifyError{Type: q.typ, From: from, To: to, Err: ErrSQDraining}
	}
	if mask&AttrAltPath != 0 {
		return &ModifyError{Type: q.typ, From: from, To: to, Extra: AttrAltPath,
			Err: fmt.Errorf("%w: alternate paths (APM) on RoCE", ErrNotSupported)}
	}
	if err := checkAttrRanges(attr, mask, &q.table.cfg.Limits); err != nil {
		return err
	}
	if mask&AttrAV != 0 {
		// A path that does not resolve is refused here, as the kernel's modify_qp refuses one it
		// cannot resolve (EINVAL), so that a connected QP never sends on an unroutable path.
		if _, err := q.table.resolve(&attr.AHAttr, "ah_attr"); err != nil {
			return err
		}
	}
	q.applyLocked(attr, mask)
	if to != from {
		q.setStateLocked(to)
	}
	return nil
}

func (q *QP) sqDraining() bool {
	q.sq.mu.Lock()
	defer q.sq.mu.Unlock()
	return q.sq.draining
}

// checkAttrRanges validates every attribute the mask selects.
func checkAttrRanges(a *Attr, mask AttrMask, l *Limits) error {
	if mask&AttrPort != 0 && (a.PortNum < 1 || a.PortNum > l.PhysPortCnt) {
		return tableErr(ErrInvalidPort, "port_num", uint64(a.PortNum), fmt.Sprintf("in 1..%d", l.PhysPortCnt))
	}
	if mask&AttrPKeyIndex != 0 && int(a.PKeyIndex) >= l.MaxPKeys {
		return tableErr(ErrInvalidPKeyIndex, "pkey_index", uint64(a.PKeyIndex), fmt.Sprintf("< %d", l.MaxPKeys))
	}
	if mask&AttrAccessFlags != 0 && a.AccessFlags&^allowedQPAccess != 0 {
		return attrErr("qp_access_flags", uint64(a.AccessFlags), "a subset of "+allowedQPAccess.String())
	}
	if mask&AttrAV != 0 {
		if err := checkAV(&a.AHAttr, "ah_attr", l); err != nil {
			return err
		}
	}
	if mask&AttrPathMTU != 0 && (!a.PathMTU.Valid() || a.PathMTU > l.MaxMTU) {
		return attrErr("path_mtu", uint64(a.PathMTU), fmt.Sprintf("in 1..%d (port max_mtu %v)", l.MaxMTU, l.MaxMTU))
	}
	if mask&AttrTimeout != 0 && a.Timeout > 31 {
		return attrErr("timeout", uint64(a.Timeout), "<= 31")
	}
	if mask&AttrRetryCnt != 0 && a.RetryCnt > 7 {
		return attrErr("retry_cnt", uint64(a.RetryCnt), "<= 7")
	}
	if mask&AttrRNRRetry != 0 && a.RNRRetry > 7 {
		return attrErr("rnr_retry", uint64(a.RNRRetry), "<= 7")
	}
	if mask&AttrMinRNRTimer != 0 && a.MinRNRTimer > 31 {
		return attrErr("min_rnr_timer", uint64(a.MinRNRTimer), "<= 31")
	}
	if mask&AttrMaxQPRdAtomic != 0 && int(a.MaxRdAtomic) > l.MaxQPInitRdAtom {
		return attrErr("max_rd_atomic", uint64(a.MaxRdAtomic), fmt.Sprintf("<= %d", l.MaxQPInitRdAtom))
	}
	if mask&AttrMaxDestRdAtomic != 0 && int(a.MaxDestRdAtomic) > l.MaxQPRdAtom {
		return attrErr("max_dest_rd_atomic", uint64(a.MaxDestRdAtomic), fmt.Sprintf("<= %d", l.MaxQPRdAtom))
	}
	if mask&AttrDestQPN != 0 && a.DestQPNum > packet.QPNMask {
		return attrErr("dest_qp_num", uint64(a.DestQPNum), "< 2^24")
	}
	if mask&AttrPathMigState != 0 && a.PathMigState > MigArmed {
		return attrErr("path_mig_state", uint64(a.PathMigState), "<= 2")
	}
	return nil
}

// checkAV validates an address vector for RoCE: a GRH is mandatory since it carries the IP
// addresses, and the port and source GID index must exist.
func checkAV(av *AddressVector, name string, l *Limits) error {
	if !av.IsGlobal {
		return attrErr(name+".is_global", 0, "1 (RoCE needs a GRH)")
	}
	if av.PortNum < 1 || av.PortNum > l.PhysPortCnt {
		return tableErr(ErrInvalidPort, name+".port_num", uint64(av.PortNum), fmt.Sprintf("in 1..%d", l.PhysPortCnt))
	}
	if int(av.GRH.SGIDIndex) >= l.GIDTableLen {
		return tableErr(ErrInvalidGIDIndex, name+".grh.sgid_index", uint64(av.GRH.SGIDIndex), fmt.Sprintf("< %d", l.GIDTableLen))
	}
	if av.GRH.DGID == [16]byte{} {
		return attrErr(name+".grh.dgid", 0, "a non-zero GID")
	}
	if av.GRH.FlowLabel > packet.FlowLabelMask {
		return attrErr(name+".grh.flow_label", uint64(av.GRH.FlowLabel), "< 2^20")
	}
	if av.SL > 15 {
		return attrErr(name+".sl", uint64(av.SL), "<= 15")
	}
	return nil
}

// roundPow2 rounds n up to a power of two as rxe does for the read/atomic depths (0 stays 0).
func roundPow2(n uint8) uint8 {
	if n <= 1 {
		return n
	}
	return uint8(1 << bits.Len8(n-1))
}

// applyLocked stores the selected attributes.
func (q *QP) applyLocked(a *Attr, mask AttrMask) {
	defer q.version.Add(1)
	d := &q.attr
	if mask&AttrEnSQDAsyncNotify != 0 {
		d.EnSQDAsyncNotify = a.EnSQDAsyncNotify
	}
	if mask&AttrAccessFlags != 0 {
		d.AccessFlags = a.AccessFlags & allowedQPAccess
	}
	if mask&AttrPKeyIndex != 0 {
		d.PKeyIndex = a.PKeyIndex
	}
	if mask&AttrPort != 0 {
		d.PortNum = a.PortNum
	}
	if mask&AttrQKey != 0 {
		d.QKey = a.QKey
	}
	if mask&AttrAV != 0 {
		d.AHAttr = a.AHAttr
	}
	if mask&AttrPathMTU != 0 {
		d.PathMTU = a.PathMTU
	}
	if mask&AttrTimeout != 0 {
		d.Timeout = a.Timeout
	}
	if mask&AttrRetryCnt != 0 {
		d.RetryCnt = a.RetryCnt
	}
	if mask&AttrRNRRetry != 0 {
		d.RNRRetry = a.RNRRetry
	}
	if mask&AttrRQPSN != 0 {
		d.RQPSN = a.RQPSN & packet.PSNMask
	}
	if mask&AttrMaxQPRdAtomic != 0 {
		d.MaxRdAtomic = roundPow2(a.MaxRdAtomic)
	}
	if mask&AttrMinRNRTimer != 0 {
		d.MinRNRTimer = a.MinRNRTimer
	}
	if mask&AttrSQPSN != 0 {
		d.SQPSN = a.SQPSN & packet.PSNMask
	}
	if mask&AttrMaxDestRdAtomic != 0 {
		d.MaxDestRdAtomic = roundPow2(a.MaxDestRdAtomic)
	}
	if mask&AttrPathMigState != 0 {
		d.PathMigState = a.PathMigState
	}
	if mask&AttrDestQPN != 0 {
		d.DestQPNum = a.DestQPNum
	}
}

// setStateLocked enters state to with its effects on the queues (q.mu held).
func (q *QP) setStateLocked(to State) {
	defer q.version.Add(1)
	from := q.attr.State
	q.attr.State = to
	q.sq.mu.Lock()
	q.sq.state = to
	switch to {
	case StateReset:
		q.resets.Add(1)
		q.sq.discardLocked()
	case StateErr, StateSQE:
		q.sq.flushLocked()
	case StateSQD:
		if from == StateRTS {
			q.sq.draining, q.sq.notify = true, q.attr.EnSQDAsyncNotify
			q.sq.checkDrainedLocked()
		}
	}
	q.sq.mu.Unlock()

	q.rqMu.Lock()
	q.rqState = to
	switch to {
	case StateReset:
		// Dropped without completions: their slots free now.
		q.rqFreed.Add(q.rq.tail - q.rq.head)
		q.rq.head, q.rq.cursor = q.rq.tail, q.rq.tail
		if q.srq != nil {
			q.srq.freed.Add(uint64(q.srqHeld))
		}
		q.srqHeld, q.lastWQEPending = 0, false // the transport drops what it held
		q.rqEpoch++
	case StateErr:
		switch {
		case q.srq == nil:
			q.rq.flush(q.recvCQ, q.qpn, &q.rqFreed)
		case from == StateErr:
		case q.srqHeld > 0:
			// The transport completes the WQEs it holds as flushed; the last one raises it.
			q.lastWQEPending = true
		default:
			q.raise(EventQPLastWQEReached)
		}
	}
	q.rqMu.Unlock()
}

// EnterError moves the QP to ERR on the transport's behalf (a fatal completion error, CQ overflow,
// or a class C responder error), flushing both queues. A WQE that failed is completed with
// SendQueue.Fail or FailRecv instead, which complete it and move the QP in one step. A QP in RESET
// or already in ERR is left alone. It returns the state the QP left and whether it moved, so the
// transport can report the change.
func (q *QP) EnterError() (from State, moved bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.enterErrorLocked(false)
}

// EnterSQError moves a UC, UD or GSI QP from RTS or SQD to SQE after a send error, flushing the
// send queue while receives continue; the user returns it to RTS with Modify. RC QPs have no SQE
// state and go to ERR instead. It returns the state the QP left and whether it moved.
func (q *QP) EnterSQError() (from State, moved bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.enterErrorLocked(true)
}

// enterErrorLocked is EnterError, or with sqOnly EnterSQError, with q.mu held.
func (q *QP) enterErrorLocked(sqOnly bool) (from State, moved bool) {
	from = q.attr.State
	switch {
	case q.destroyed:
		return from, false
	case sqOnly && q.typ != TypeRC:
		if from != StateRTS && from != StateSQD {
			return from, false
		}
		q.setStateLocked(StateSQE)
	default:
		if from == StateReset || from == StateErr {
			return from, false
		}
		q.setStateLocked(StateErr)
	}
	return from, true
}
