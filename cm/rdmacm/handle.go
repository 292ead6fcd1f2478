package rdmacm

import (
	"context"
	"fmt"
	"time"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm"
	"github.com/gorxe/gorxe/cm/mad"
)

// handle reacts to one manager event on the run loop, as the kernel's RDMA-CM layer does for
// ib_cm's: REQs go to the listener's backlog, handshake events to the Dial or Accept waiting for
// them, and a peer's DREQ is answered at once after the QP is moved to the error state.
func (a *agent) handle(now time.Time, e cm.Event, out *cm.Output) {
	if e.Type == cm.EventREQReceived {
		a.onREQ(now, e, out)
		return
	}
	if a.handleSIDR(now, e, out) {
		return
	}
	c := a.conns[e.Conn]
	if c == nil {
		return // a REQ still in a backlog, or a connection already forgotten
	}
	switch e.Type {
	case cm.EventREPReceived:
		c.onREP(now, e, out)
	case cm.EventEstablished:
		c.onEstablished(now, e, out)
	case cm.EventRejected:
		c.emit(Event{Type: EventRejected, Err: e.Err, PrivateData: e.PrivateData})
		c.handshake(e)
	case cm.EventUnreachable:
		c.emit(Event{Type: EventUnreachable, Err: e.Err})
		c.handshake(e)
	case cm.EventDREQReceived:
		if !c.leaveQPOnDREQ {
			c.res.toError()
		}
		_ = a.mgr.Disconnect(now, c.id, nil, out)
		c.disconnect(Event{Type: EventDisconnected, PrivateData: e.PrivateData})
	case cm.EventDisconnected:
		c.disconnect(Event{Type: EventDisconnected, Err: e.Err, PrivateData: e.PrivateData})
	case cm.EventTimewaitExit:
		c.emit(Event{Type: EventTimewaitExit})
	}
	a.reap(c)
}

// onREP completes the active side's handshake on the run loop, as the kernel's RDMA-CM does in
// its REP handler: the QP goes to RTR and RTS with the negotiated attributes and the RTU leaves
// at once. Handing the REP to the Dial goroutine instead would leave a window in which a
// retransmitted REP finds the connection still in REPRcvd and is answered with an MRA, which
// makes the passive side wait the MRA's service timeout (69 s) should the RTU then be lost.
func (c *Conn) onREP(now time.Time, e cm.Event, out *cm.Output) {
	a := c.a
	c.attrs = e.Attrs
	c.privateData = e.PrivateData
	c.remoteECE = e.ECE
	if c.res.qp == nil {
		// The caller moves its QP and sends the RTU itself (Options.QPN, Conn.SendRTU).
		c.handshake(e)
		return
	}
	if v := e.ECE.VendorID; c.checkECEVendor && v != 0 && v != c.eceVendor {
		c.refuseREP(now, fmt.Errorf("%w: REP vendor %#06x, ours %#06x", ErrECEVendor, v, c.eceVendor), out)
		return
	}
	err := c.res.toRTR(a.dev, &c.attrs)
	if err == nil {
		err = c.res.toRTS(&c.attrs)
	}
	if err != nil {
		c.refuseREP(now, fmt.Errorf("moving the QP to RTR and RTS: %w", err), out)
		return
	}
	_ = a.mgr.SendRTU(now, c.id, nil, out)
}

// refuseREP rejects the REP the connection received (consumer defined, what the kernel sends when
// librdmacm's program gives up on an id whose REP it could not use) and fails the Dial with err.
func (c *Conn) refuseREP(now time.Time, err error, out *cm.Output) {
	_ = c.a.mgr.Reject(now, c.id, mad.RejConsumerDefined, nil, nil, out)
	c.handshake(cm.Event{Type: cm.EventRejected, Conn: c.id, Err: err})
}

// onREQ queues a REQ for the listener of its service ID after checking the CMA header's
// destination against the listener's address; a REQ nobody can take is rejected as the kernel
// rejects it. One that finds the backlog full is dropped unanswered, as the kernel drops it: its
// RDMA-CM handler fails with ENOMEM, and ib_cm then forgets the REQ without sending a REJ. The
// peer retransmits its REQ every response timeout, and a retransmission that comes after Accept
// made room is queued as a new request; a peer that never finds room gives up as it does for
// silence (Unreachable). A SIDR_REQ is refused instead (see onSIDRREQ).
func (a *agent) onREQ(now time.Time, e cm.Event, out *cm.Output) {
	l := a.listeners[e.ServiceID]
	hdr, user, ok := mad.SplitCMAPrivateData(e.PrivateData)
	switch {
	case l == nil || (ok && !l.core.matches(hdr.Dst)):
		_ = a.mgr.Reject(now, e.Conn, mad.RejInvalidServiceID, nil, nil, out)
		return
	case !ok:
		_ = a.mgr.Reject(now, e.Conn, mad.RejConsumerDefined, nil, nil, out)
		return
	}
	_, port, _ := mad.SplitServiceID(e.ServiceID)
	local, peer := a.requestAddrs(hdr, port)
	r := &request{id: e.Conn, attrs: e.Attrs, user: user, ece: e.ECE, peer: peer, local: local}
	select {
	case l.core.backlog <- r:
	default:
		_ = a.mgr.DropREQ(e.Conn)
	}
}

// reap forgets a connection the manager no longer holds.
func (a *agent) reap(c *Conn) {
	if c.reaped {
		return
	}
	if _, ok := a.mgr.Conn(c.id); ok {
		return
	}
	a.forget(c)
}

// forget drops a connection: it releases the connection's reference on the agent (off this
// goroutine, since the last release stops it) and then closes Done.
func (a *agent) forget(c *Conn) {
	c.reaped = true
	delete(a.conns, c.id)
	if !c.disc {
		c.disc = true
		close(c.disconnected)
	}
	go func() {
		a.release()
		close(c.done)
	}()
}

// handshake passes an event to the Dial or Accept waiting on the connection.
func (c *Conn) handshake(e cm.Event) {
	select {
	case c.hs <- e:
	default:
	}
}

// nextHandshake returns the next handshake event for the Dial or Accept in progress. The run loop
// queues the event that ends a connection before Done can close, so a queued event wins over
// Done: a rejection is reported as such, not as a closed connection.
func (c *Conn) nextHandshake(ctx context.Context) (cm.Event, error) {
	select {
	case e := <-c.hs:
		return e, nil
	case <-c.done:
		select {
		case e := <-c.hs:
			return e, nil
		default:
		}
		if err := c.a.stopped(); err != nil {
			return cm.Event{}, err // the device closed, which ended the connection
		}
		return cm.Event{}, ErrClosed
	case <-ctx.Done():
		return cm.Event{}, ctx.Err()
	case <-c.a.ctx.Done():
		return cm.Event{}, c.a.stopped()
	}
}

// emit queues an event for the user. The buffer holds every event a connection can have.
func (c *Conn) emit(e Event) {
	select {
	case c.events <- e:
	default:
	}
}

// disconnect reports the first disconnection.
func (c *Conn) disconnect(e Event) {
	if c.disc {
		return
	}
	c.disc = true
	close(c.disconnected)
	c.emit(e)
}

// onEstablished ends the handshake. The passive side's QP goes to RTS only now, as IBTA's CM has
// it (librdmacm and the kernel move it before the REP leaves): a QP still in RTR raises
// Communication Established for its first packet, which stands in for a lost RTU (comm_est.go).
func (c *Conn) onEstablished(now time.Time, e cm.Event, out *cm.Output) {
	if c.passive && c.res.qp != nil && c.res.qp.State() != gorxe.QPStateRTS { // Options.RTSAtAccept moved it already
		if err := c.res.toRTS(&c.attrs); err != nil {
			_ = c.a.mgr.Disconnect(now, c.id, nil, out)
			c.handshake(cm.Event{Type: cm.EventUnreachable, Conn: c.id, Err: fmt.Errorf("moving the QP to RTS: %w", err)})
			return
		}
	}
	c.established = true
	c.emit(Event{Type: EventEstablished})
	c.handshake(e)
}
