package perftest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/gorxe/gorxe/cm"
	"github.com/gorxe/gorxe/cm/mad"
	"github.com/gorxe/gorxe/cm/rdmacm"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
)

// cmEndpoint is where a run's RDMA-CM connections go: the listener of a server, which the
// control connection came from too, or the address of a client's server. perftest connects every
// QP to the test's port (-p), the port its exchange used; UD QPs (-c UD) to that port of RDMA-CM's
// UDP port space, where a server listens too (ud).
type cmEndpoint struct {
	l      *rdmacm.Listener
	ud     *rdmacm.UDListener
	server netip.AddrPort
}

// How a client retries a connection its server refused for want of a listener: a perftest server
// listens for the test's QPs only after the barrier that precedes them, so the first request may
// come too early. perftest's client tries ten times, 100 ms apart.
const (
	cmConnectTries = 10
	cmRetryDelay   = 100 * time.Millisecond
)

// connOptions are the RDMA-CM parameters of the test's QPs, as perftest's rdma_cm_route_handler
// and rdma_cm_connection_request_handler give them: READ and ATOMIC tests offer and ask for the
// outstanding reads both ways, the others 0; the retry count (--retry_count, 7) is also the RNR
// retry count; the QPs share the test's PD and CQs (QP i's). -T is the route's TOS and -u the ACK
// timeout (rdma_set_option, as current perftest sets it).
func (r *rdma) connOptions(i int) *rdmacm.Options {
	p := r.p
	o := &rdmacm.Options{PD: r.pd, SendCQ: r.sendCQ.of(i), RecvCQ: r.recvCQ.of(i), Cap: r.caps,
		AckTimeout: uint8(p.QPTimeout)}
	if p.Test.Verb == VerbRead || p.Test.Verb == VerbAtomic {
		o.ResponderResources = uint8(min(r.outReads, 255))
		o.InitiatorDepth = o.ResponderResources
	} else {
		o.NoRDMARead = true
	}
	o.RetryCount, o.ZeroRetryCount = uint8(p.RetryCount), p.RetryCount == 0
	o.RNRRetryCount, o.ZeroRNRRetryCount = o.RetryCount, o.ZeroRetryCount
	if p.TOS != defTOS {
		o.TrafficClass = uint8(p.TOS)
	}
	if p.IsServer() && p.Conn == RC {
		// perftest's server sets its MIN_RNR_TIMER (0.64 ms) on each RC QP after rdma_accept; its
		// client keeps the CM's 0.
		o.MinRNRTimer = minRNRTimer
	}
	return o
}

func (r *rdma) cmConnect(ctx context.Context) ([]Dest, error) {
	if r.cm == nil {
		return nil, errors.New("no RDMA-CM endpoint for -R") // unreachable: Run sets it with -R
	}
	if r.p.Conn == UD {
		return r.cmConnectUD(ctx)
	}
	for i := range r.p.NumQPs {
		c, err := r.cmConnectOne(ctx, r.connOptions(i))
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			err = fmt.Errorf("%w after %v", tool.ErrTimedOut, r.p.Timeout)
		}
		if err != nil {
			return nil, stepErr(err, "Failed to create RDMA CM connection")
		}
		r.conns = append(r.conns, c)
		r.qps = append(r.qps, c.QP())
	}
	r.setLocal()
	return r.local, nil
}

// cmConnectOne makes one connection: the next request on a server, a connection to the server on
// a client.
func (r *rdma) cmConnectOne(ctx context.Context, o *rdmacm.Options) (*rdmacm.Conn, error) {
	stepCtx, cancel := r.stepContext(ctx)
	defer cancel()
	if r.cm.l != nil {
		return r.cm.l.AcceptWith(stepCtx, o)
	}
	for try := 1; ; try++ {
		c, err := rdmacm.Dial(stepCtx, r.dev, r.cm.server, o)
		var rej *cm.RejectError
		if err == nil || try == cmConnectTries || !errors.As(err, &rej) || rej.Reason != mad.RejInvalidServiceID {
			return c, err
		}
		select {
		case <-time.After(cmRetryDelay):
		case <-stepCtx.Done():
			return nil, stepCtx.Err()
		}
	}
}

// stepContext bounds a step before the measurement by --timeout.
func (r *rdma) stepContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if r.p.Timeout > 0 {
		return context.WithTimeout(ctx, r.p.Timeout)
	}
	return context.WithCancel(ctx)
}

// closeConns disconnects the test's connections (perftest's client disconnects each and waits
// for the answers; at exit the kernel sends a DREQ for whatever is still connected), waiting for
// the answers no longer than tool.Linger, and destroys their QPs. The CQs and the PD stay for
// close to release.
func (r *rdma) closeConns() error {
	err := tool.Hangup(context.Background(), r.conns...)
	r.conns, r.qps = nil, nil
	return err
}

// cmServerAddr resolves the server operand of a client for RDMA-CM: an address of the peer's
// device, of the family of --ipv6.
func cmServerAddr(ctx context.Context, p *Params) (netip.AddrPort, error) {
	host := p.Server
	if len(host) > 1 && host[0] == '[' && host[len(host)-1] == ']' {
		host = host[1 : len(host)-1]
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return netip.AddrPortFrom(a.Unmap(), uint16(p.Port)), nil
	}
	network := "ip4"
	if p.IPv6 {
		network = "ip6"
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, network, host)
	if err != nil || len(addrs) == 0 {
		return netip.AddrPort{}, fmt.Errorf("resolving the server %s: %w", host, errors.Join(err, errNoAddress))
	}
	return netip.AddrPortFrom(addrs[0].Unmap(), uint16(p.Port)), nil
}

var errNoAddress = errors.New("no address")
