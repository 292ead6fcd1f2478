package rdmacm

import (
	"context"
	"net/netip"
	"time"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm"
	"github.com/gorxe/gorxe/cm/mad"
)

// Listener takes the connection requests for one port (rdma_listen).
type Listener struct {
	core listenCore[*request]
	opts Options
}

// request is a REQ waiting in a listener's backlog.
type request struct {
	id          cm.ConnID
	attrs       cm.QPAttrs
	user        []byte
	ece         cm.ECE // the REQ's
	peer, local netip.AddrPort
}

// backlogLen is the default of rdma_listen's backlog (Options.Backlog): while this many requests
// wait for Accept, further REQs are dropped unanswered (the peer retransmits them) and further
// SIDR_REQs refused.
const backlogLen = 16

// backlog returns the length of a listener's backlog under options o.
func (o *Options) backlog() int {
	if o.Backlog > 0 {
		return o.Backlog
	}
	return backlogLen
}

// Listen opens the device's agent and listens on addr (RDMA-CM's TCP port space; an unspecified
// address takes connections to any of the device's addresses). opts, which may be nil, shape the
// connections Accept returns and size the backlog (Options.Backlog).
func Listen(ctx context.Context, dev *gorxe.Device, addr netip.AddrPort, opts *Options) (*Listener, error) {
	l, err := withAgent(dev, func(a *Agent) (*Listener, error) { return a.Listen(ctx, addr, opts) })
	return l, closedErr("listen", addr, err)
}

// Listen listens on addr through the agent; see the package-level Listen.
func (h *Agent) Listen(ctx context.Context, addr netip.AddrPort, opts *Options) (*Listener, error) {
	l, err := h.a.listen(ctx, addr, opts)
	return l, closedErr("listen", addr, err)
}

func (a *agent) listen(ctx context.Context, addr netip.AddrPort, opts *Options) (*Listener, error) {
	l := &Listener{}
	if opts != nil {
		l.opts = *opts
	}
	if err := startListen(ctx, a, &l.core, addr, mad.PortSpaceTCP, l.opts.backlog(), func() { a.listeners[l.core.sid] = l }); err != nil {
		return nil, err
	}
	return l, nil
}

// Addr returns the address the listener was given.
func (l *Listener) Addr() netip.AddrPort { return l.core.addr }

// Accept waits for a connection request and accepts it (rdma_accept): the QP goes to RTR and the
// REP is sent. It returns the connection once established, its QP then moved to RTS: when the
// peer's RTU arrives, or its first packet reaches the QP (Communication Established, which stands
// in for a lost RTU). librdmacm moves the QP to RTS before the REP leaves; gorxe follows IBTA's
// CM. A request the peer has given up on meanwhile is skipped. Closing the listener ends the wait
// with ErrClosed, closing the device with an error matching gorxe.ErrDeviceClosed.
func (l *Listener) Accept(ctx context.Context) (*Conn, error) { return l.AcceptWith(ctx, nil) }

// AcceptWith is Accept with options for this one connection instead of the listener's: a server
// that pre-posts receives (Options.Recv) needs a buffer of its own per connection. nil takes the
// listener's options.
func (l *Listener) AcceptWith(ctx context.Context, opts *Options) (*Conn, error) {
	if opts == nil {
		opts = &l.opts
	}
	c, err := acceptNext(ctx, &l.core, func(r *request) (*Conn, error) { return l.accept(ctx, r, opts) })
	return c, closedErr("accept", l.core.addr, err)
}

// Close stops listening (rdma_destroy_id on a listening id): requests still in the backlog are
// rejected.
func (l *Listener) Close() error {
	l.core.stop(func() { delete(l.core.a.listeners, l.core.sid) }, func(now time.Time, r *request, out *cm.Output) {
		_ = l.core.a.mgr.Reject(now, r.id, mad.RejConsumerDefined, nil, nil, out)
	})
	return nil
}
