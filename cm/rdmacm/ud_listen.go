package rdmacm

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm"
	"github.com/gorxe/gorxe/cm/mad"
)

// UDListener takes the service ID resolution requests for one port of RDMA-CM's UDP port space
// (rdma_listen on an RDMA_PS_UDP id).
type UDListener struct {
	a       *agent
	sid     uint64
	addr    netip.AddrPort
	opts    UDOptions
	backlog chan *udRequest
	closed  chan struct{}
	once    sync.Once
}

// ListenUD opens the device's agent and listens on addr in the UDP port space (an unspecified
// address takes requests for any of the device's addresses). opts, which may be nil, shape the
// endpoints Accept returns.
func ListenUD(ctx context.Context, dev *gorxe.Device, addr netip.AddrPort, opts *UDOptions) (*UDListener, error) {
	a, err := Open(dev, Config{})
	if err != nil {
		return nil, err
	}
	defer a.Close()
	return a.ListenUD(ctx, addr, opts)
}

// ListenUD listens on addr through the agent; see the package-level ListenUD.
func (h *Agent) ListenUD(ctx context.Context, addr netip.AddrPort, opts *UDOptions) (*UDListener, error) {
	return h.a.listenUD(ctx, addr, opts)
}

func (a *agent) listenUD(ctx context.Context, addr netip.AddrPort, opts *UDOptions) (*UDListener, error) {
	ip := addr.Addr().Unmap()
	if addr.Port() == 0 || (ip.IsValid() && !ip.IsUnspecified() && gidIndex(a.dev, ip) < 0) {
		return nil, fmt.Errorf("listen on %v: %w", addr, ErrAddress)
	}
	if err := a.acquire(); err != nil {
		return nil, err
	}
	l := &UDListener{a: a, sid: mad.ServiceID(mad.PortSpaceUDP, addr.Port()), addr: netip.AddrPortFrom(ip, addr.Port()),
		backlog: make(chan *udRequest, backlogLen), closed: make(chan struct{})}
	if opts != nil {
		l.opts = *opts
	}
	err := a.do(ctx, func(time.Time, *cm.Output) error {
		if err := a.mgr.Listen(l.sid); err != nil {
			return err
		}
		if a.ud.listeners == nil {
			a.ud.listeners = make(map[uint64]*UDListener)
		}
		a.ud.listeners[l.sid] = l
		return nil
	})
	if err != nil {
		a.release()
		return nil, err
	}
	return l, nil
}

// Addr returns the address the listener was given.
func (l *UDListener) Addr() netip.AddrPort { return l.addr }

// matches reports whether a request for dst is for this listener.
func (l *UDListener) matches(dst netip.Addr) bool {
	ip := l.addr.Addr()
	return !ip.IsValid() || ip.IsUnspecified() || ip == dst.Unmap()
}

// Accept waits for a service ID resolution request and accepts it (rdma_accept on a UD id): it
// creates the UD QP and answers with a SIDR_REP naming the QP and RDMA-CM's Q_Key. A request
// the peer has given up on meanwhile is skipped. opts nil takes the listener's options.
func (l *UDListener) Accept(ctx context.Context, opts *UDOptions) (*UDConn, error) {
	if opts == nil {
		opts = &l.opts
	}
	for {
		var r *udRequest
		select {
		case r = <-l.backlog:
		case <-l.closed:
			return nil, ErrClosed
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		c, err := l.accept(ctx, r, opts)
		if errors.Is(err, cm.ErrUnknownConn) || errors.Is(err, cm.ErrState) {
			continue
		}
		return c, err
	}
}

func (l *UDListener) accept(ctx context.Context, r *udRequest, o *UDOptions) (*UDConn, error) {
	a := l.a
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
		return a.mgr.ReplySIDR(now, r.id, cm.SIDRReply{Status: mad.SIDRSuccess, QPN: c.res.qp.QPN(), QKey: mad.UDPQKey,
			PrivateData: o.PrivateData}, out)
	})
	if err != nil {
		return nil, errors.Join(err, c.Close())
	}
	return c, nil
}

// Close stops listening: requests still in the backlog are refused.
func (l *UDListener) Close() error {
	l.once.Do(func() {
		close(l.closed)
		_ = l.a.do(context.Background(), func(now time.Time, out *cm.Output) error {
			delete(l.a.ud.listeners, l.sid)
			_ = l.a.mgr.Unlisten(l.sid)
			for {
				select {
				case r := <-l.backlog:
					_ = l.a.mgr.ReplySIDR(now, r.id, cm.SIDRReply{Status: mad.SIDRReject}, out)
				default:
					return nil
				}
			}
		})
		l.a.release()
	})
	return nil
}
