package rdmacm

import (
	"context"
	"errors"
	"net/netip"
	"sync"
	"time"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm"
)

// Conn is one RDMA-CM connection: a reliable-connected QP joined to a peer's, with its completion
// queues (each on a completion channel of its own, so CQ.Wait works on both).
type Conn struct {
	a           *agent
	id          cm.ConnID
	res         *resources
	local, peer netip.AddrPort
	privateData []byte
	remoteECE   cm.ECE
	// eceVendor is the only vendor ID besides 0 a REP may carry (Options.CheckECEVendor).
	eceVendor      uint32
	checkECEVendor bool
	leaveQPOnDREQ  bool // Options.LeaveQPOnDREQ
	attrs          cm.QPAttrs

	hs     chan cm.Event // handshake events for the Dial or Accept in progress
	events chan Event

	// Closed by the run loop: disconnected on the first disconnection event, done when the
	// connection is gone and its reference on the agent released.
	disconnected chan struct{}
	done         chan struct{}
	// Owned by the run loop. passive: the accepting side, whose QP waits in RTR for the
	// establishment.
	established, disc, reaped, passive bool

	closeOnce sync.Once
	closeErr  error
}

// eventBuffer holds a connection's events until the user reads them; a connection has at most
// one of each kind, so none is ever dropped.
const eventBuffer = 8

func newConn(a *agent, res *resources, local, peer netip.AddrPort) *Conn {
	return &Conn{a: a, res: res, local: local, peer: peer,
		hs: make(chan cm.Event, eventBuffer), events: make(chan Event, eventBuffer),
		disconnected: make(chan struct{}), done: make(chan struct{})}
}

// QP returns the connection's queue pair.
func (c *Conn) QP() *gorxe.QP { return c.res.qp }

// PD returns the protection domain of the QP: register the memory the connection uses on it.
func (c *Conn) PD() *gorxe.PD { return c.res.pd }

// SendCQ and RecvCQ return the completion queues of the QP's send and receive queues.
func (c *Conn) SendCQ() *gorxe.CQ { return c.res.sendCQ }

// RecvCQ returns the completion queue of the QP's receive queue.
func (c *Conn) RecvCQ() *gorxe.CQ { return c.res.recvCQ }

// LocalAddr returns our address and port (the active side's source port, the listener's port).
func (c *Conn) LocalAddr() netip.AddrPort { return c.local }

// RemoteAddr returns the peer's address and port.
func (c *Conn) RemoteAddr() netip.AddrPort { return c.peer }

// PrivateData returns the peer's private data: the REQ's after the CMA header on the passive
// side, the REP's on the active side. CM messages carry no length, so it is the whole area,
// zero-padded.
func (c *Conn) PrivateData() []byte { return c.privateData }

// RemoteECE returns the peer's Enhanced Connection Establishment (rdma_get_remote_ece): the
// REP's on the active side, the REQ's on the passive side; zero from a peer that sent none.
func (c *Conn) RemoteECE() cm.ECE { return c.remoteECE }

// Attrs returns the QP attributes the connection was established with.
func (c *Conn) Attrs() cm.QPAttrs { return c.attrs }

// Events returns the connection's events after it was established: disconnected, timewait exit.
func (c *Conn) Events() <-chan Event { return c.events }

// Done is closed when the connection has left timewait and is gone.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Disconnect sends a DREQ (rdma_disconnect) and waits until the peer answers with a DREP, the CM
// gives up on it, or ctx ends. The QP goes to the error state first, so posted work completes
// flushed. It returns at once when the connection is already disconnected, and with an error
// matching gorxe.ErrDeviceClosed when the device is closed.
func (c *Conn) Disconnect(ctx context.Context) error {
	return closedErr("disconnect", c.peer, c.disconnectWait(ctx))
}

func (c *Conn) disconnectWait(ctx context.Context) error {
	if err := c.sendDREQ(ctx); err != nil {
		return err
	}
	select {
	case <-c.disconnected:
	case <-c.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	// A device that closed ended the connection without the peer's answer.
	if err := c.a.stopped(); errors.Is(err, gorxe.ErrDeviceClosed) {
		return err
	}
	return nil
}

// SendRTU completes the active side's handshake for a caller that moves its QP itself
// (Options.QPN, rdma_establish): Dial returned when the REP arrived, the caller moved its QP to
// RTR and RTS with Attrs, and the RTU now tells the passive side.
func (c *Conn) SendRTU() error {
	return c.a.do(context.Background(), func(now time.Time, out *cm.Output) error {
		return c.a.mgr.SendRTU(now, c.id, nil, out)
	})
}

// SendDREQ is the first half of Disconnect, rdma_disconnect as the kernel runs it: the QP goes to
// the error state and the DREQ leaves, and it returns without waiting for the DREP; Events then
// reports the disconnection when the DREP (or the CM's giving up on it) comes.
func (c *Conn) SendDREQ() error {
	return closedErr("disconnect", c.peer, c.sendDREQ(context.Background()))
}

func (c *Conn) sendDREQ(ctx context.Context) error {
	c.res.toError()
	err := c.a.do(ctx, func(now time.Time, out *cm.Output) error {
		info, ok := c.a.mgr.Conn(c.id)
		if ok && info.State == cm.StateEstablished {
			return c.a.mgr.Disconnect(now, c.id, nil, out)
		}
		return nil
	})
	if errors.Is(err, ErrClosed) {
		<-c.done // the connection ended first (see Close)
		return nil
	}
	if errors.Is(err, gorxe.ErrDeviceClosed) {
		<-c.done // the agent forgot every connection when the device closed
	}
	return err
}

// Close disconnects (a DREQ when established, a REJ during a handshake) without waiting for the
// peer, and destroys the QP, its CQs and the PD if the connection allocated it. The connection
// spends its timewait in the agent; Done says when it is over.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		c.res.toError()
		err := c.a.do(context.Background(), func(now time.Time, out *cm.Output) error {
			info, ok := c.a.mgr.Conn(c.id)
			if !ok {
				return nil
			}
			var err error
			switch info.State {
			case cm.StateEstablished:
				err = c.a.mgr.Disconnect(now, c.id, nil, out)
			case cm.StateDREQSent, cm.StateTimewait:
			default:
				err = c.a.mgr.Destroy(now, c.id, out)
			}
			c.a.reap(c)
			return err
		})
		if errors.Is(err, ErrClosed) || errors.Is(err, gorxe.ErrDeviceClosed) {
			// The agent stops only after its last reference is released, and this connection
			// holds one until it has ended, or when the device closes, which ends every
			// connection: either way it ended first, and Done closes right after.
			<-c.done
			err = nil
		}
		c.closeErr = errors.Join(err, c.res.destroy())
	})
	return c.closeErr
}
