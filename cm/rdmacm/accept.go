package rdmacm

import (
	"context"
	"errors"
	"time"

	"github.com/gorxe/gorxe/cm"
	"github.com/gorxe/gorxe/cm/mad"
)

// accept answers one request: the QP goes to RTR, the REP leaves, and the connection is
// returned, its QP in RTS, once the RTU or the QP's first packet established it.
func (l *Listener) accept(ctx context.Context, r *request, o *Options) (*Conn, error) {
	c, err := l.sendREP(ctx, r, o)
	if err != nil {
		return nil, err
	}
	if err := c.waitEstablished(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// sendREP is accept up to the REP: it returns the connection once the REP has left.
func (l *Listener) sendREP(ctx context.Context, r *request, o *Options) (*Conn, error) {
	a := l.core.a
	reject := func(reason mad.RejectReason) {
		_ = a.do(context.Background(), func(now time.Time, out *cm.Output) error {
			return a.mgr.Reject(now, r.id, reason, nil, nil, out)
		})
	}
	// What the REQ asked for bounds what we grant, as rdma_accept bounds it (the REQ's initiator
	// depth is the most responder resources we need, its responder resources the deepest we may
	// read).
	attrs := r.attrs
	attrs.MaxDestRdAtomic = min(attrs.MaxDestRdAtomic, o.responder())
	attrs.MaxRdAtomic = min(attrs.MaxRdAtomic, o.initiator())
	attrs.PathMTU = min(attrs.PathMTU, portMTU(a.dev, o.MTU))
	// A packet on the QP before the RTU means the peer had our REP and sent its RTU, which may be
	// lost: the connection is established (IBTA's CM in the REP-sent state, the kernel's ib_cm_notify).
	res, err := newResources(a.dev, o, attrs.MaxDestRdAtomic, a.commEstHandler(r.id))
	if err != nil {
		reject(mad.RejNoResources)
		return nil, err
	}
	err = res.toRTR(a.dev, &attrs)
	if err == nil && o.RTSAtAccept {
		err = res.toRTS(&attrs)
	}
	if err != nil {
		reject(mad.RejConsumerDefined)
		return nil, errors.Join(err, res.destroy())
	}
	if err := a.acquire(); err != nil {
		return nil, errors.Join(err, res.destroy())
	}
	c := newConn(a, res, r.local, r.peer)
	c.leaveQPOnDREQ = o.LeaveQPOnDREQ
	c.id = r.id
	c.privateData = r.user
	c.remoteECE = r.ece
	err = a.do(ctx, func(now time.Time, out *cm.Output) error {
		err := a.mgr.Accept(now, r.id, cm.AcceptParams{
			LocalQPN: res.localQPN(), ResponderResources: attrs.MaxDestRdAtomic, InitiatorDepth: attrs.MaxRdAtomic,
			RNRRetryCount: o.rnrRetry(), PrivateData: o.PrivateData, ECE: o.ECE}, out)
		if err != nil {
			return err
		}
		info, _ := a.mgr.Conn(r.id)
		c.attrs = info.Attrs
		c.attrs.PathMTU = attrs.PathMTU
		// The QP stays in RTR, where it receives and answers, until the connection is
		// established (see onEstablished).
		c.passive = true
		a.conns[r.id] = c
		return nil
	})
	if err != nil {
		a.release()
		return nil, errors.Join(err, res.destroy())
	}
	return c, nil
}

// WaitEstablished waits until the connection Request.SendREP returned is established (the RTU,
// or the QP's first packet, arrived), or fails with the error Accept would have returned. It
// returns at once for an established connection's later callers only until the handshake's
// event was taken: call it once.
func (c *Conn) WaitEstablished(ctx context.Context) error { return c.waitEstablished(ctx) }

// waitEstablished waits until the handshake ends: on the passive side the RTU, on the active
// side the REP the run loop handled (see onREP), or a rejection or silence.
func (c *Conn) waitEstablished(ctx context.Context) error {
	for {
		e, err := c.nextHandshake(ctx)
		if err != nil {
			return err
		}
		switch e.Type {
		case cm.EventEstablished:
			return nil
		case cm.EventREPReceived: // only for a caller that moves its QP (see onREP)
			return nil
		case cm.EventRejected:
			return &RejectedError{Err: e.Err, PrivateData: e.PrivateData}
		case cm.EventUnreachable:
			return e.Err
		}
	}
}
