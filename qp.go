package gorxe

import (
	"errors"
	"fmt"

	"github.com/gorxe/gorxe/internal/stack"
	"github.com/gorxe/gorxe/qp"
)

// QPInitAttr are the creation parameters of a QP (struct ibv_qp_init_attr).
type QPInitAttr struct {
	// Context is returned by QP.Context (qp_context).
	Context any
	SendCQ  *CQ
	RecvCQ  *CQ
	// SRQ, when set, supplies the receive WQEs; Cap.MaxRecvWR and Cap.MaxRecvSGE are then ignored.
	SRQ    *SRQ
	Cap    QPCap
	QPType QPType
	// SQSigAll makes every send work request complete with a WC, as if SendSignaled were set.
	SQSigAll bool
	// EventHandler, when set, is called with each asynchronous event of the QP besides its going
	// to GetAsyncEvent, as the kernel's ib_qp_init_attr.event_handler is: a connection manager
	// learns of EventCommEst for its own QPs this way without taking events from the application.
	// It runs on the goroutine that raised the event, possibly with the QP's locks held, so it
	// must not block or call into the QP.
	EventHandler func(AsyncEvent)
}

// QP is a queue pair (ibv_qp). Its traffic runs on one of the device's workers; posting and
// modifying are safe from any goroutine.
type QP struct {
	dev    *Device
	q      *qp.QP
	pd     *PD
	sendCQ *CQ
	recvCQ *CQ
	srq    *SRQ
	ctx    any
	h      *stack.QP
	// onEvent is QPInitAttr.EventHandler; set before the QP exists for the transport.
	onEvent func(AsyncEvent)
}

// CreateQP creates a queue pair in the RESET state (ibv_create_qp). A QPTypeGSI QP gets QP number
// 1; there is one per device.
func (d *Device) CreateQP(pd *PD, attr *QPInitAttr) (*QP, error) {
	const op = "create_qp"
	if err := d.checkPD(op, pd); err != nil {
		return nil, err
	}
	if attr == nil {
		return nil, argErr(op, ErrNilObject, "init attributes are nil")
	}
	if attr.SendCQ == nil || attr.RecvCQ == nil {
		return nil, &Error{Op: op, Err: ErrMissingCQ}
	}
	if err := d.checkCQ(op, "send CQ", attr.SendCQ); err != nil {
		return nil, err
	}
	if err := d.checkCQ(op, "receive CQ", attr.RecvCQ); err != nil {
		return nil, err
	}
	w := &QP{dev: d, pd: pd, sendCQ: attr.SendCQ, recvCQ: attr.RecvCQ, srq: attr.SRQ, ctx: attr.Context,
		onEvent: attr.EventHandler}
	init := qp.InitAttr{
		Context: w, SendCQ: attr.SendCQ.cq, RecvCQ: attr.RecvCQ.cq,
		Cap: attr.Cap, Type: attr.QPType, SQSigAll: attr.SQSigAll,
	}
	if attr.SRQ != nil {
		if attr.SRQ.dev != d {
			return nil, argErr(op, ErrWrongDevice, "SRQ")
		}
		init.SRQ = attr.SRQ.s
	}
	d.life.RLock()
	defer d.life.RUnlock()
	if err := d.check(op); err != nil {
		return nil, err
	}
	q, err := d.qpt.CreateQP(pd.pd, &init)
	if err != nil {
		return nil, opErr(op, err)
	}
	w.q = q
	if w.h, err = d.rt.Add(q); err != nil {
		q.Destroy()
		return nil, &Error{Op: op, Err: ErrDeviceClosed}
	}
	return w, nil
}

// QPN returns the QP number (ibv_qp.qp_num).
func (q *QP) QPN() uint32 { return q.q.QPN() }

// Type returns the QP type.
func (q *QP) Type() QPType { return q.q.Type() }

// State returns the current state (ibv_qp.state).
func (q *QP) State() QPState { return q.q.State() }

// Context returns QPInitAttr.Context.
func (q *QP) Context() any { return q.ctx }

// PD returns the QP's protection domain.
func (q *QP) PD() *PD { return q.pd }

// SendCQ returns the CQ send completions go to.
func (q *QP) SendCQ() *CQ { return q.sendCQ }

// RecvCQ returns the CQ receive completions go to.
func (q *QP) RecvCQ() *CQ { return q.recvCQ }

// SRQ returns the shared receive queue the QP uses, or nil.
func (q *QP) SRQ() *SRQ { return q.srq }

// Device returns the device the QP belongs to.
func (q *QP) Device() *Device { return q.dev }

// Modify changes the QP's attributes and state (ibv_modify_qp); mask says which fields of attr
// are used, and must hold exactly what the IBTA state table requires for the transition (a
// *ModifyError names what is missing or not allowed). It runs on the QP's worker, so the
// transport sees the new attributes before it handles another packet for the QP. Entering
// QPStateErr completes outstanding work requests with WCWRFlushErr before Modify returns.
func (q *QP) Modify(attr *QPAttr, mask QPAttrMask) error {
	const op = "modify_qp"
	if attr == nil {
		return argErr(op, ErrNilObject, "attributes are nil")
	}
	d := q.dev
	if mask&QPAttrAV != 0 {
		if i := attr.AHAttr.GRH.SGIDIndex; !d.gidIndexUsable(int(i)) {
			return argErr(op, ErrInvalidGIDIndex, d.unusableGID(int(i)))
		}
	}
	d.life.RLock()
	defer d.life.RUnlock()
	if err := d.check(op); err != nil {
		return err
	}
	err := q.h.Modify(attr, mask)
	if errors.Is(err, stack.ErrClosed) {
		return &Error{Op: op, Err: ErrDeviceClosed}
	}
	return opErr(op, err)
}

// Query returns the QP's attributes and creation parameters (ibv_query_qp with every attribute).
func (q *QP) Query() (QPAttr, QPInitAttr, error) {
	if err := q.dev.check("query_qp"); err != nil {
		return QPAttr{}, QPInitAttr{}, err
	}
	a, in := q.q.Query()
	return a, QPInitAttr{
		Context: q.ctx, SendCQ: q.sendCQ, RecvCQ: q.recvCQ, SRQ: q.srq,
		Cap: in.Cap, QPType: in.Type, SQSigAll: in.SQSigAll,
	}, nil
}

// PostSend posts send work requests (ibv_post_send). It stops at the first invalid one and returns
// a *PostError naming its index; the ones before it are posted. It does not allocate and does not
// wait for the network; on a QP with nothing outstanding (and a worker nobody else is running) it
// builds and sends the first packets itself, as rxe's post_send runs its requester inline.
//
// A post does not take the device's life lock (see Device.life): the QP's queue lock orders it
// with Close's move to the error state.
func (q *QP) PostSend(wrs []SendWR) error {
	if q.dev.closed.Load() {
		return &Error{Op: "post_send", Err: ErrDeviceClosed}
	}
	return opErr("post_send", q.h.PostSend(wrs))
}

// PostRecv posts receive work requests (ibv_post_recv); a QP on an SRQ refuses them (ErrHasSRQ).
func (q *QP) PostRecv(wrs []RecvWR) error {
	if q.dev.closed.Load() {
		return &Error{Op: "post_recv", Err: ErrDeviceClosed}
	}
	if err := q.q.PostRecv(wrs); err != nil {
		return opErr("post_recv", err)
	}
	return nil
}

// MWBindInfo describes a type 1 window bind made with QP.BindMW (struct ibv_mw_bind with its
// bind_info).
type MWBindInfo struct {
	WRID      uint64    // wr_id of the bind's completion
	SendFlags SendFlags // SendSignaled for a WC on success; SendFence
	MR        *MR       // the region to bind to; nil (with Length 0) unbinds
	Addr      uint64    // first byte of the window, an address in the region
	Length    uint64    // 0 unbinds
	Access    Access    // remote rights the window grants
}

// BindMW binds a type 1 memory window through this QP (ibv_bind_mw): the bind is posted as a
// BIND_MW work request and the window's new rkey is returned at once, as libibverbs does; it is
// valid once the bind completes. Type 2 windows are bound by posting WRBindMW with PostSend.
func (q *QP) BindMW(mw *MW, info MWBindInfo) (uint32, error) {
	const op = "bind_mw"
	switch {
	case mw == nil:
		return 0, argErr(op, ErrNilObject, "memory window is nil")
	case mw.pd.dev != q.dev:
		return 0, argErr(op, ErrWrongDevice, "memory window")
	case mw.Type() != MWType1:
		return 0, argErr(op, ErrMWType, "bind type 2 windows with a WRBindMW work request")
	case info.MR != nil && info.MR.dev != q.dev:
		return 0, argErr(op, ErrWrongDevice, "memory region")
	case info.MR == nil && info.Length != 0:
		return 0, argErr(op, ErrNilObject, "memory region is nil")
	}
	b := MWBind{MWKey: mw.RKey(), NewKey: IncKey(mw.RKey()), Addr: info.Addr, Length: info.Length, Access: info.Access}
	if info.MR != nil {
		b.MRKey = info.MR.LKey()
	}
	wr := [1]SendWR{{ID: info.WRID, Opcode: WRBindMW, Flags: info.SendFlags, BindMW: b}}
	if err := q.PostSend(wr[:]); err != nil {
		return 0, &Error{Op: op, Err: errorsUnwrapOp(err)}
	}
	return b.NewKey, nil
}

// errorsUnwrapOp strips the *Error of an inner verb so the outer one names itself.
func errorsUnwrapOp(err error) error {
	if e, ok := err.(*Error); ok {
		return e.Err
	}
	return err
}

// Destroy destroys the QP (ibv_destroy_qp): it leaves its multicast groups, stops its traffic and
// frees its QP number. Outstanding work requests are dropped without completions, as with
// libibverbs; move the QP to QPStateErr first to have them flushed.
func (q *QP) Destroy() error {
	d := q.dev
	d.life.RLock()
	defer d.life.RUnlock()
	if err := d.check("destroy_qp"); err != nil {
		return err
	}
	return opErr("destroy_qp", q.h.Destroy())
}

// AttachMcast joins the UD QP to the multicast group gid (ibv_attach_mcast): packets sent to the
// group's address with destination QP 0xFFFFFF are delivered to it. A group takes at most 56 QPs
// (rxe's max_mcast_qp_attach). lid is ignored on RoCE.
//
// On RoCEv2 the group's GID is its IP address: an IPv4 group is the IPv4-mapped GID
// ::ffff:a.b.c.d, an IPv6 group the GID itself. The first QP attached to a group makes the device
// join the IP group on its interfaces (on UDP sockets: IP_ADD_MEMBERSHIP, which sends IGMP, or
// IPV6_JOIN_GROUP, MLD), and the last one detached leaves it; a refused membership fails the
// attach. Kernel rxe itself only adds the group's MAC to the interface's filter and leaves the
// IGMP join to rdma_cm; gorxe's sockets receive nothing without one, so it joins here.
func (q *QP) AttachMcast(gid GID, lid uint16) error {
	const op = "attach_mcast"
	if err := q.checkMcast(op, gid); err != nil {
		return err
	}
	switch err := q.h.Attach(gid.Addr()); {
	case errors.Is(err, stack.ErrGroupFull):
		return argErr(op, ErrInvalidArgument, fmt.Sprintf("group %v already has %d QPs", gid, stack.MaxMcastQPAttach))
	case errors.Is(err, stack.ErrAttached):
		return argErr(op, ErrInvalidArgument, fmt.Sprintf("QP %d is already attached to %v", q.QPN(), gid))
	case err != nil:
		return opErr(op, err)
	}
	return nil
}

// DetachMcast leaves the multicast group gid (ibv_detach_mcast).
func (q *QP) DetachMcast(gid GID, lid uint16) error {
	const op = "detach_mcast"
	if err := q.checkMcast(op, gid); err != nil {
		return err
	}
	if q.h.Detach(gid.Addr()) != nil {
		return argErr(op, ErrInvalidArgument, fmt.Sprintf("QP %d is not attached to %v", q.QPN(), gid))
	}
	return nil
}

func (q *QP) checkMcast(op string, gid GID) error {
	if err := q.dev.check(op); err != nil {
		return err
	}
	if q.Type() != QPTypeUD {
		return argErr(op, ErrInvalidQPType, "multicast needs a UD QP")
	}
	if !gid.Addr().IsMulticast() {
		return argErr(op, ErrInvalidArgument, fmt.Sprintf("%v is not a multicast GID", gid))
	}
	return nil
}
