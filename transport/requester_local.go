package transport

import (
	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/qp"
)

// executeLocal runs a LOCAL_INV, REG_MR or BIND_MW work request when the requester reaches it, so
// it takes effect in order with the send stream (and after earlier READs and atomics when
// fenced). It sends nothing; the completer completes it once every earlier WQE has completed.
func (r *requester) executeLocal(w *qp.SendWQE) {
	mem, pd, qpn := r.e.dev.Mem, r.e.q.PD(), r.a.qpn
	var err error
	switch w.WR.Opcode {
	case qp.WRLocalInv:
		err = mem.LocalInvalidate(pd, qpn, w.WR.InvalidateRKey)
	case qp.WRRegMR:
		err = mem.RegFast(pd, &w.WR.RegMR)
	case qp.WRBindMW:
		// Type 1 windows (ibv_bind_mw) and type 2 windows take the same path, as in rxe.
		err = mem.BindMW(pd, qpn, &w.WR.BindMW)
	}
	if err != nil {
		r.fail(w, localOpStatus(w.WR.Opcode, err))
		return
	}
	w.Progress.State = wqeDone
}

// localOpStatus maps the failure of a local operation to its completion status: a bad or foreign
// key is a local protection error, a bind failure a memory window bind error, and an operation
// the object's state or type does not allow a local QP operation error.
func localOpStatus(op qp.WROpcode, err error) cq.Status {
	if op == qp.WRBindMW {
		return cq.WCMWBindErr
	}
	switch err {
	case mr.ErrKeyInvalid, mr.ErrPDMismatch, mr.ErrAccessDenied, mr.ErrAccessFlags, mr.ErrMWOtherQP:
		return cq.WCLocProtErr
	}
	return cq.WCLocQPOpErr
}
