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

// Dial opens the device's agent and connects to the listener at addr (rdma_resolve_addr,
// rdma_resolve_route, rdma_create_qp and rdma_connect in one call): it sends a REQ and returns the
// established connection, a *cm.RejectError when the peer refuses (no listener: reason 8,
// invalid service ID), an error matching cm.ErrTimeout when nobody answers (a listener whose
// backlog stays full through every retransmission of the REQ answers nothing), or ctx's error.
// opts may be nil.
func Dial(ctx context.Context, dev *gorxe.Device, addr netip.AddrPort, opts *Options) (*Conn, error) {
	c, err := withAgent(dev, func(a *Agent) (*Conn, error) { return a.Dial(ctx, addr, opts) })
	return c, closedErr("dial", addr, err)
}

// Dial connects through the agent; see the package-level Dial.
func (h *Agent) Dial(ctx context.Context, addr netip.AddrPort, opts *Options) (*Conn, error) {
	c, err := h.a.dial(ctx, addr, opts)
	return c, closedErr("dial", addr, err)
}

func (a *agent) dial(ctx context.Context, addr netip.AddrPort, opts *Options) (*Conn, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	local, peer, err := a.endpoints(addr, o.Source)
	if err != nil {
		return nil, err
	}
	src := local.Addr()
	pdata, err := mad.AppendCMAPrivateData(nil, &mad.CMAHeaderFields{SrcPort: local.Port(), Src: src, Dst: peer.Addr()}, o.PrivateData)
	if err != nil {
		return nil, err
	}
	res, err := newResources(a.dev, &o, o.responder(), nil)
	if err != nil {
		return nil, err
	}
	if err := a.acquire(); err != nil {
		return nil, errors.Join(err, res.destroy())
	}
	c := newConn(a, res, local, peer)
	c.leaveQPOnDREQ = o.LeaveQPOnDREQ
	c.eceVendor, c.checkECEVendor = o.ECE.VendorID, o.CheckECEVendor
	params := cm.ConnectParams{
		ServiceID: mad.ServiceID(mad.PortSpaceTCP, addr.Port()),
		Path:      tosPath(cm.RDMACMPath(local, peer, portMTU(a.dev, o.MTU)), o.TrafficClass),
		Transport: mad.TransportRC, LocalQPN: res.localQPN(),
		ResponderResources: o.responder(), InitiatorDepth: o.initiator(),
		RetryCount: o.retry(), RNRRetryCount: o.rnrRetry(), PrivateData: pdata, ECE: o.ECE,
	}
	err = a.do(ctx, func(now time.Time, out *cm.Output) error {
		id, err := a.mgr.Connect(now, params, out)
		if err != nil {
			return err
		}
		c.id = id
		a.conns[id] = c
		a.routes[params.Path.RemoteGID] = gidIndex(a.dev, src)
		return nil
	})
	if err != nil {
		a.release()
		return nil, errors.Join(err, res.destroy())
	}
	if err := c.waitEstablished(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}
