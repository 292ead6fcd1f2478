package rdmacm

import (
	"context"
	"errors"
	"net/netip"
	"time"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm"
	"github.com/gorxe/gorxe/cm/mad"
)

// UDListener takes the service ID resolution requests for one port of RDMA-CM's UDP port space
// (rdma_listen on an RDMA_PS_UDP id).
type UDListener struct {
	core listenCore[*udRequest]
	opts UDOptions
}

// ListenUD opens the device's agent and listens on addr in the UDP port space (an unspecified
// address takes requests for any of the device's addresses). opts, which may be nil, shape the
// endpoints Accept returns and size the backlog (Options.Backlog).
func ListenUD(ctx context.Context, dev *gorxe.Device, addr netip.AddrPort, opts *UDOptions) (*UDListener, error) {
	l, err := withAgent(dev, func(a *Agent) (*UDListener, error) { return a.ListenUD(ctx, addr, opts) })
	return l, closedErr("listen", addr, err)
}

// ListenUD listens on addr through the agent; see the package-level ListenUD.
func (h *Agent) ListenUD(ctx context.Context, addr netip.AddrPort, opts *UDOptions) (*UDListener, error) {
	l, err := h.a.listenUD(ctx, addr, opts)
	return l, closedErr("listen", addr, err)
}

func (a *agent) listenUD(ctx context.Context, addr netip.AddrPort, opts *UDOptions) (*UDListener, error) {
	l := &UDListener{}
	if opts != nil {
		l.opts = *opts
	}
	register := func() {
		if a.ud.listeners == nil {
			a.ud.listeners = make(map[uint64]*UDListener)
		}
		a.ud.listeners[l.core.sid] = l
	}
	if err := startListen(ctx, a, &l.core, addr, mad.PortSpaceUDP, l.opts.backlog(), register); err != nil {
		return nil, err
	}
	return l, nil
}

// Addr returns the address the listener was given.
func (l *UDListener) Addr() netip.AddrPort { return l.core.addr }

// Accept waits for a service ID resolution request and accepts it (rdma_accept on a UD id): it
// creates the UD QP and answers with a SIDR_REP naming the QP and RDMA-CM's Q_Key. A request
// the peer has given up on meanwhile is skipped. opts nil takes the listener's options.
func (l *UDListener) Accept(ctx context.Context, opts *UDOptions) (*UDConn, error) {
	if opts == nil {
		opts = &l.opts
	}
	c, err := acceptNext(ctx, &l.core, func(r *udRequest) (*UDConn, error) { return l.accept(ctx, r, opts) })
	return c, closedErr("accept", l.core.addr, err)
}

func (l *UDListener) accept(ctx context.Context, r *udRequest, o *UDOptions) (*UDConn, error) {
	a := l.core.a
	if err := a.acquire(); err != nil {
		return nil, err
	}
	c, err := newUDConn(a, o, r.local, r.peer, r.peerGID)
	if err != nil {
		a.release()
		_ = a.do(context.Background(), func(now time.Time, out *cm.Output) error {
			return a.mgr.ReplySIDR(now, r.id, cm.SIDRReply{Status: mad.SIDRNoQP}, out)
		})
		return nil, err
	}
	c.privateData = r.user
	err = a.do(ctx, func(now time.Time, out *cm.Output) error {
		return a.mgr.ReplySIDR(now, r.id, cm.SIDRReply{Status: mad.SIDRSuccess, QPN: c.res.localQPN(), QKey: mad.UDPQKey,
			PrivateData: o.PrivateData}, out)
	})
	if err != nil {
		return nil, errors.Join(err, c.Close())
	}
	return c, nil
}

// Close stops listening: requests still in the backlog are refused.
func (l *UDListener) Close() error {
	l.core.stop(func() { delete(l.core.a.ud.listeners, l.core.sid) }, func(now time.Time, r *udRequest, out *cm.Output) {
		_ = l.core.a.mgr.ReplySIDR(now, r.id, cm.SIDRReply{Status: mad.SIDRReject}, out)
	})
	return nil
}
