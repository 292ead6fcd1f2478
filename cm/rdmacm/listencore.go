package rdmacm

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/gorxe/gorxe/cm"
	"github.com/gorxe/gorxe/cm/mad"
)

// listenCore is what a Listener (connections, TCP port space) and a UDListener (SIDR, UDP port
// space) share: the service ID registered with the manager, the address listened on, and the
// backlog of requests R the agent's loop fills for Accept.
type listenCore[R any] struct {
	a       *agent
	sid     uint64
	addr    netip.AddrPort
	backlog chan R
	closed  chan struct{}
	once    sync.Once
}

// startListen checks addr, takes a handle on the agent and registers the service ID of port
// space ps for addr's port with the manager; register, run in the agent's loop, makes the
// listener findable by that ID.
func startListen[R any](ctx context.Context, a *agent, l *listenCore[R], addr netip.AddrPort, ps mad.PortSpace,
	backlog int, register func()) error {
	ip := addr.Addr().Unmap()
	if addr.Port() == 0 || (ip.IsValid() && !ip.IsUnspecified() && gidIndex(a.dev, ip) < 0) {
		return fmt.Errorf("listen on %v: %w", addr, ErrAddress)
	}
	if err := a.acquire(); err != nil {
		return err
	}
	l.a, l.sid, l.addr = a, mad.ServiceID(ps, addr.Port()), netip.AddrPortFrom(ip, addr.Port())
	l.backlog, l.closed = make(chan R, backlog), make(chan struct{})
	err := a.do(ctx, func(time.Time, *cm.Output) error {
		if err := a.mgr.Listen(l.sid); err != nil {
			return err
		}
		register()
		return nil
	})
	if err != nil {
		a.release()
	}
	return err
}

// matches reports whether a request for dst, the CMA header's address, is for this listener. The
// header carries no zone: the request reached this device, so a link-local address listened on
// with its link's zone is the one it names.
func (l *listenCore[R]) matches(dst netip.Addr) bool {
	ip := l.addr.Addr()
	return !ip.IsValid() || ip.IsUnspecified() || ip.WithZone("") == dst.Unmap().WithZone("")
}

// next waits for the next request in the backlog: ErrClosed once the listener is closed, an error
// matching gorxe.ErrDeviceClosed and naming op (the caller's call) once its device is.
func (l *listenCore[R]) next(ctx context.Context, op string) (R, error) {
	var none R
	select {
	case r := <-l.backlog:
		return r, nil
	case <-l.closed:
		return none, ErrClosed
	case <-ctx.Done():
		return none, ctx.Err()
	case <-l.a.ctx.Done():
		return none, closedErr(op, l.addr, l.a.stopped())
	}
}

// acceptNext waits for a request and hands it to accept, skipping those the peer has given up on
// meanwhile (the manager no longer knows them, or they moved on).
func acceptNext[R, C any](ctx context.Context, l *listenCore[R], accept func(R) (C, error)) (C, error) {
	var none C
	for {
		r, err := l.next(ctx, "accept")
		if err != nil {
			return none, err
		}
		c, err := accept(r)
		if errors.Is(err, cm.ErrUnknownConn) || errors.Is(err, cm.ErrState) {
			continue
		}
		return c, err
	}
}

// stop unregisters the listener (unregister runs in the agent's loop), refuses the requests
// still in its backlog and releases the agent, once.
func (l *listenCore[R]) stop(unregister func(), refuse func(now time.Time, r R, out *cm.Output)) {
	l.once.Do(func() {
		close(l.closed)
		_ = l.a.do(context.Background(), func(now time.Time, out *cm.Output) error {
			unregister()
			_ = l.a.mgr.Unlisten(l.sid)
			for {
				select {
				case r := <-l.backlog:
					refuse(now, r, out)
				default:
					return nil
				}
			}
		})
		l.a.release()
	})
}
