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

// Listener takes the connection requests for one port (rdma_listen).
type Listener struct {
	a       *agent
	sid     uint64
	addr    netip.AddrPort
	opts    Options
	backlog chan *request
	closed  chan struct{}
	once    sync.Once
}

// request is a REQ waiting in a listener's backlog.
type request struct {
	id          cm.ConnID
	attrs       cm.QPAttrs
	user        []byte
	peer, local netip.AddrPort
}

// backlogLen is the default of rdma_listen's backlog (Options.Backlog): further REQs are rejected
// while this many wait for Accept.
const backlogLen = 16

// Listen opens the device's agent and listens on addr (RDMA-CM's TCP port space; an unspecified
// address takes connections to any of the device's addresses). opts, which may be nil, shape the
// connections Accept returns.
func Listen(ctx context.Context, dev *gorxe.Device, addr netip.AddrPort, opts *Options) (*Listener, error) {
	a, err := Open(dev, Config{})
	if err != nil {
		return nil, err
	}
	defer a.Close()
	return a.Listen(ctx, addr, opts)
}

// Listen listens on addr through the agent; see the package-level Listen.
func (h *Agent) Listen(ctx context.Context, addr netip.AddrPort, opts *Options) (*Listener, error) {
	return h.a.listen(ctx, addr, opts)
}

func (a *agent) listen(ctx context.Context, addr netip.AddrPort, opts *Options) (*Listener, error) {
	ip := addr.Addr().Unmap()
	if addr.Port() == 0 || (ip.IsValid() && !ip.IsUnspecified() && gidIndex(a.dev, ip) < 0) {
		return nil, fmt.Errorf("listen on %v: %w", addr, ErrAddress)
	}
	if err := a.acquire(); err != nil {
		return nil, err
	}
	l := &Listener{a: a, sid: mad.ServiceID(mad.PortSpaceTCP, addr.Port()), addr: netip.AddrPortFrom(ip, addr.Port()),
		closed: make(chan struct{})}
	if opts != nil {
		l.opts = *opts
	}
	n := backlogLen
	if l.opts.Backlog > 0 {
		n = l.opts.Backlog
	}
	l.backlog = make(chan *request, n)
	err := a.do(ctx, func(time.Time, *cm.Output) error {
		if err := a.mgr.Listen(l.sid); err != nil {
			return err
		}
		a.listeners[l.sid] = l
		return nil
	})
	if err != nil {
		a.release()
		return nil, err
	}
	return l, nil
}

// Addr returns the address the listener was given.
func (l *Listener) Addr() netip.AddrPort { return l.addr }

// matches reports whether a REQ for dst is for this listener.
func (l *Listener) matches(dst netip.Addr) bool {
	ip := l.addr.Addr()
	return !ip.IsValid() || ip.IsUnspecified() || ip == dst.Unmap()
}

// Accept waits for a connection request, accepts it (rdma_accept: the QP goes to RTR and RTS,
// then the REP is sent) and returns the connection once the peer's RTU establishes it. A request
// the peer has given up on meanwhile is skipped.
func (l *Listener) Accept(ctx context.Context) (*Conn, error) { return l.AcceptWith(ctx, nil) }

// AcceptWith is Accept with options for this one connection instead of the listener's: a server
// that pre-posts receives (Options.Recv) needs a buffer of its own per connection. nil takes the
// listener's options.
func (l *Listener) AcceptWith(ctx context.Context, opts *Options) (*Conn, error) {
	if opts == nil {
		opts = &l.opts
	}
	for {
		var r *request
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

// Close stops listening (rdma_destroy_id on a listening id): requests still in the backlog are
// rejected.
func (l *Listener) Close() error {
	l.once.Do(func() {
		close(l.closed)
		_ = l.a.do(context.Background(), func(now time.Time, out *cm.Output) error {
			delete(l.a.listeners, l.sid)
			_ = l.a.mgr.Unlisten(l.sid)
			for {
				select {
				case r := <-l.backlog:
					_ = l.a.mgr.Reject(now, r.id, mad.RejConsumerDefined, nil, nil, out)
				default:
					return nil
				}
			}
		})
		l.a.release()
	})
	return nil
}
