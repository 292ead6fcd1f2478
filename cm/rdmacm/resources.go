package rdmacm

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm"
)

// resources are a connection's verbs objects.
type resources struct {
	pd             *gorxe.PD
	ownPD          bool
	sendCh, recvCh *gorxe.CompChannel
	sendCQ, recvCQ *gorxe.CQ
	qp             *gorxe.QP
	responder      uint8  // responder resources: gives the QP remote READ and atomic rights
	ownCQs         bool   // the CQs are the connection's, not the caller's (Options.SendCQ)
	ownQP          bool   // the QP is the connection's, not the caller's (Options.QP)
	qpn            uint32 // Options.QPN: the caller's QP, moved by the caller; qp is nil
	// Local overrides of the negotiated attributes (Options.AckTimeout, Options.MinRNRTimer);
	// zero keeps the CM's value.
	ackTimeout, minRNRTimer uint8
}

// newResources creates a connection's PD (unless given), CQs and RC QP, moves the QP to INIT
// and posts the options' receives. onEvent, if not nil, is the QP's event handler
// (gorxe.QPInitAttr.EventHandler).
func newResources(dev *gorxe.Device, o *Options, responder uint8, onEvent func(gorxe.AsyncEvent)) (*resources, error) {
	return newResourcesOf(dev, o, gorxe.QPTypeRC, responder, onEvent)
}

// newResourcesOf is newResources for a QP of type typ: RC, or UD (see ud.go), whose INIT takes
// the Q_Key instead of access rights.
func newResourcesOf(dev *gorxe.Device, o *Options, typ gorxe.QPType, responder uint8, onEvent func(gorxe.AsyncEvent)) (_ *resources, err error) {
	// r is not the named result: a failing step returns nil, and the deferred cleanup must still
	// see what was created.
	r := &resources{pd: o.PD, responder: responder, ackTimeout: o.AckTimeout, minRNRTimer: o.MinRNRTimer}
	if o.QP != nil {
		return r.adopt(o.QP, typ)
	}
	if o.QPN != 0 {
		r.qpn = o.QPN
		return r, nil
	}
	r.ownQP = true
	own, err := o.ownCQs()
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			r.destroy()
		}
	}()
	if r.pd == nil {
		if r.pd, err = dev.AllocPD(); err != nil {
			return nil, err
		}
		r.ownPD = true
	}
	caps := o.caps()
	cqe := o.CQE
	r.ownCQs = own
	if !own {
		r.sendCQ, r.recvCQ = o.SendCQ, o.RecvCQ
	}
	for _, p := range []struct {
		ch **gorxe.CompChannel
		cq **gorxe.CQ
		n  int
	}{{&r.sendCh, &r.sendCQ, caps.MaxSendWR}, {&r.recvCh, &r.recvCQ, caps.MaxRecvWR}}[:cqsToMake(own)] {
		if *p.ch, err = dev.CreateCompChannel(); err != nil {
			return nil, err
		}
		n := cqe
		if n == 0 {
			n = p.n // the one queue completing into this CQ: the sum of the depths is its own
		}
		if *p.cq, err = dev.CreateCQ(n, *p.ch); err != nil {
			return nil, err
		}
	}
	if r.qp, err = dev.CreateQP(r.pd, &gorxe.QPInitAttr{SendCQ: r.sendCQ, RecvCQ: r.recvCQ,
		QPType: typ, Cap: caps, EventHandler: onEvent}); err != nil {
		return nil, err
	}
	if typ == gorxe.QPTypeUD {
		err = r.readyUD()
	} else {
		err = r.toInit()
	}
	if err != nil {
		return nil, err
	}
	if len(o.Recv) > 0 {
		if err = r.qp.PostRecv(o.Recv); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// adopt makes the caller's QP the connection's (Options.QP) and moves it to INIT (again, if it
// is there already: INIT to INIT updates the access rights, as librdmacm does before RTR).
func (r *resources) adopt(qp *gorxe.QP, typ gorxe.QPType) (*resources, error) {
	if qp.Type() != typ {
		return nil, fmt.Errorf("%w: the QP is %v, the connection needs %v", ErrOptions, qp.Type(), typ)
	}
	r.qp, r.pd, r.sendCQ, r.recvCQ = qp, qp.PD(), qp.SendCQ(), qp.RecvCQ()
	if typ == gorxe.QPTypeUD {
		if qp.State() == gorxe.QPStateRTS {
			return r, nil
		}
		return r, r.readyUD()
	}
	return r, r.toInit()
}

// cqsToMake is how many of the send and receive CQs newResources creates.
func cqsToMake(own bool) int {
	if own {
		return 2
	}
	return 0
}

// localQPN is the number of the connection's QP.
func (r *resources) localQPN() uint32 {
	if r.qp == nil {
		return r.qpn
	}
	return r.qp.QPN()
}

// toInit moves the QP to INIT with the access rights ib_cm gives it: remote writes always, remote
// reads and atomics when we offer responder resources.
func (r *resources) toInit() error {
	if r.qp == nil {
		return nil
	}
	access := gorxe.AccessRemoteWrite
	if r.responder > 0 {
		access |= gorxe.AccessRemoteRead | gorxe.AccessRemoteAtomic
	}
	return r.qp.Modify(&gorxe.QPAttr{State: gorxe.QPStateInit, PortNum: 1, AccessFlags: access},
		gorxe.QPAttrState|gorxe.QPAttrPKeyIndex|gorxe.QPAttrPort|gorxe.QPAttrAccessFlags)
}

// toRTR applies the negotiated receive-side attributes (ib_cm_init_qp_attr for RTR).
func (r *resources) toRTR(dev *gorxe.Device, a *cm.QPAttrs) error {
	if r.qp == nil {
		return nil // the caller moves its QP (Options.QPN)
	}
	sgid := gidIndex(dev, gidAddr(a.LocalGID))
	if sgid < 0 {
		return ErrAddress
	}
	attr := gorxe.QPAttr{
		State:   gorxe.QPStateRTR,
		PathMTU: gorxe.MTU(a.PathMTU),
		AHAttr: gorxe.AHAttr{IsGlobal: true, PortNum: 1, SL: a.SL, GRH: gorxe.GlobalRoute{
			DGID: a.RemoteGID, FlowLabel: a.FlowLabel, SGIDIndex: uint8(sgid),
			HopLimit: a.HopLimit, TrafficClass: a.TrafficClass}},
		DestQPNum:       a.RemoteQPN,
		RQPSN:           a.RQPSN,
		MaxDestRdAtomic: a.MaxDestRdAtomic,
		MinRNRTimer:     a.MinRNRTimer,
	}
	if r.minRNRTimer != 0 {
		attr.MinRNRTimer = r.minRNRTimer
	}
	return r.qp.Modify(&attr, gorxe.QPAttrState|gorxe.QPAttrAV|gorxe.QPAttrPathMTU|gorxe.QPAttrDestQPN|
		gorxe.QPAttrRQPSN|gorxe.QPAttrMaxDestRdAtomic|gorxe.QPAttrMinRNRTimer)
}

// toRTS applies the negotiated send-side attributes (ib_cm_init_qp_attr for RTS).
func (r *resources) toRTS(a *cm.QPAttrs) error {
	if r.qp == nil {
		return nil
	}
	attr := gorxe.QPAttr{State: gorxe.QPStateRTS, SQPSN: a.SQPSN, Timeout: a.Timeout,
		RetryCnt: a.RetryCount, RNRRetry: a.RNRRetry, MaxRdAtomic: a.MaxRdAtomic}
	if r.ackTimeout != 0 {
		attr.Timeout = r.ackTimeout
	}
	return r.qp.Modify(&attr, gorxe.QPAttrState|gorxe.QPAttrSQPSN|gorxe.QPAttrTimeout|
		gorxe.QPAttrRetryCnt|gorxe.QPAttrRNRRetry|gorxe.QPAttrMaxQPRdAtomic)
}

// toError moves the QP to the error state, flushing its posted work.
func (r *resources) toError() {
	if r.qp == nil {
		return
	}
	r.qp.Modify(&gorxe.QPAttr{State: gorxe.QPStateErr}, gorxe.QPAttrState)
}

// destroy releases what newResources created, in reverse order.
func (r *resources) destroy() error {
	var errs []error
	if r.qp != nil && r.ownQP {
		errs = append(errs, r.qp.Destroy())
	}
	for _, cq := range []*gorxe.CQ{r.sendCQ, r.recvCQ} {
		if cq != nil && r.ownCQs {
			errs = append(errs, cq.Destroy())
		}
	}
	for _, ch := range []*gorxe.CompChannel{r.sendCh, r.recvCh} {
		if ch != nil {
			errs = append(errs, ch.Destroy())
		}
	}
	if r.ownPD && r.pd != nil {
		errs = append(errs, r.pd.Dealloc())
	}
	return joinLive(errs...)
}

// joinLive joins the errors of releasing objects, leaving out those that found the device closed:
// the device took its objects with it, so there is nothing left to fail.
func joinLive(errs ...error) error {
	return errors.Join(slices.DeleteFunc(errs, func(err error) bool { return errors.Is(err, gorxe.ErrDeviceClosed) })...)
}
