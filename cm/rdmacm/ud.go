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
	"github.com/gorxe/gorxe/packet"
)

// UDOptions shape a UD endpoint (an RDMA-CM id of the UDP port space). Of the embedded Options,
// PD, Cap, CQE, Recv, SendCQ and RecvCQ, Source and, for ListenUD, Backlog apply; PrivateData goes
// in the SIDR_REQ after the CMA header (at most 180 bytes) or in the SIDR_REP (at most 136
// bytes). The RC fields are unused.
type UDOptions struct {
	Options
	// TrafficClass is the IP traffic class (DSCP and ECN) of the address handle to the peer, as
	// rdma_set_option's RDMA_OPTION_ID_TOS sets it.
	TrafficClass uint8
}

// UDConn is a UD QP whose peer was found through the connection manager: on the active side the
// peer's QPN and Q_Key from its SIDR_REP, on both sides an address handle to the peer's GID. UD
// has no connection: nothing is torn down with the peer, and Close only frees our resources.
type UDConn struct {
	a           *agent
	res         *resources
	ah          *gorxe.AH
	local, peer netip.AddrPort
	remoteGID   gorxe.GID
	remoteQPN   uint32
	remoteQKey  uint32
	privateData []byte
	closeOnce   sync.Once
	closeErr    error
}

// QP returns the UD queue pair, ready to send and receive (RTS) with Q_Key mad.UDPQKey; nil
// for the caller's own QP (Options.QPN), which the caller readies itself.
func (c *UDConn) QP() *gorxe.QP { return c.res.qp }

// PD returns the protection domain of the QP and of the address handle.
func (c *UDConn) PD() *gorxe.PD { return c.res.pd }

// SendCQ returns the completion queue of the QP's send queue.
func (c *UDConn) SendCQ() *gorxe.CQ { return c.res.sendCQ }

// RecvCQ returns the completion queue of the QP's receive queue.
func (c *UDConn) RecvCQ() *gorxe.CQ { return c.res.recvCQ }

// AH returns the address handle to the peer (ibv_create_ah on the event's ud.ah_attr).
func (c *UDConn) AH() *gorxe.AH { return c.ah }

// RemoteGID returns the peer's GID.
func (c *UDConn) RemoteGID() gorxe.GID { return c.remoteGID }

// RemoteQPN returns the peer's UD QPN from its SIDR_REP. The passive side does not learn it from
// the SIDR_REQ and returns 0: the source QP of the peer's first message tells it (udaddy sends
// its QPN as immediate data for that reason).
func (c *UDConn) RemoteQPN() uint32 { return c.remoteQPN }

// RemoteQKey returns the Q_Key to send to the peer with: the SIDR_REP's on the active side, RDMA-CM's
// mad.UDPQKey on the passive side.
func (c *UDConn) RemoteQKey() uint32 { return c.remoteQKey }

// LocalAddr returns our address and port.
func (c *UDConn) LocalAddr() netip.AddrPort { return c.local }

// RemoteAddr returns the peer's address and port.
func (c *UDConn) RemoteAddr() netip.AddrPort { return c.peer }

// PrivateData returns the peer's private data: the SIDR_REQ's after the CMA header on the passive
// side, the SIDR_REP's on the active side, zero-padded as CM messages carry no length.
func (c *UDConn) PrivateData() []byte { return c.privateData }

// Close destroys the address handle, the QP, its CQs and the PD if the endpoint allocated it.
func (c *UDConn) Close() error {
	c.closeOnce.Do(func() {
		var errs []error
		if c.ah != nil {
			errs = append(errs, c.ah.Destroy())
		}
		c.closeErr = joinLive(append(errs, c.res.destroy())...)
		c.a.release()
	})
	return c.closeErr
}

// readyUD moves a fresh UD QP to INIT with RDMA-CM's Q_Key, then to RTR and RTS (PSN 0), as
// rdma_create_qp does for an id of the UDP port space.
func (r *resources) readyUD() error {
	steps := []struct {
		attr gorxe.QPAttr
		mask gorxe.QPAttrMask
	}{
		{gorxe.QPAttr{State: gorxe.QPStateInit, PortNum: 1, QKey: mad.UDPQKey},
			gorxe.QPAttrState | gorxe.QPAttrPKeyIndex | gorxe.QPAttrPort | gorxe.QPAttrQKey},
		{gorxe.QPAttr{State: gorxe.QPStateRTR}, gorxe.QPAttrState},
		{gorxe.QPAttr{State: gorxe.QPStateRTS}, gorxe.QPAttrState | gorxe.QPAttrSQPSN},
	}
	for _, s := range steps {
		if err := r.qp.Modify(&s.attr, s.mask); err != nil {
			return err
		}
	}
	return nil
}

// newUDConn creates a UD endpoint's resources and its address handle to peerGID, sent from local.
func newUDConn(a *agent, o *UDOptions, local, peer netip.AddrPort, peerGID [16]byte) (*UDConn, error) {
	res, err := newResourcesOf(a.dev, &o.Options, gorxe.QPTypeUD, 0, nil)
	if err != nil {
		return nil, err
	}
	if res.pd == nil {
		// The caller's own QP (Options.QPN) with no PD given: the address handle needs one.
		if res.pd, err = a.dev.AllocPD(); err != nil {
			return nil, err
		}
		res.ownPD = true
	}
	c := &UDConn{a: a, res: res, local: local, peer: peer, remoteGID: gorxe.GID(peerGID), remoteQKey: mad.UDPQKey}
	if err := c.createAH(o.TrafficClass); err != nil {
		return nil, errors.Join(err, res.destroy())
	}
	return c, nil
}

// createAH makes the address handle to the peer along the path RDMA-CM resolves (GID of the local
// address, its default hop limit).
func (c *UDConn) createAH(tclass uint8) error {
	sgid := gidIndex(c.a.dev, c.local.Addr())
	if sgid < 0 {
		return ErrAddress
	}
	ah, err := c.res.pd.CreateAH(&gorxe.AHAttr{IsGlobal: true, PortNum: 1, GRH: gorxe.GlobalRoute{
		DGID: c.remoteGID, SGIDIndex: uint8(sgid), HopLimit: cm.DefaultHopLimit, TrafficClass: tclass,
		FlowLabel: packet.CMFlowLabel(c.local.Port(), c.peer.Port())}})
	if err != nil {
		return err
	}
	c.ah = ah
	return nil
}

// DialUD opens the device's agent and resolves the UD endpoint listening at addr in RDMA-CM's UDP
// port space (rdma_resolve_addr, rdma_resolve_route, rdma_create_qp and rdma_connect on an
// RDMA_PS_UDP id): it creates a UD QP, sends a SIDR_REQ and returns once the SIDR_REP names the
// peer's QPN and Q_Key. A refusal is a *cm.SIDRError (no listener: status 1, "service ID not
// supported"); a peer that never answers matches cm.ErrTimeout. opts may be nil.
func DialUD(ctx context.Context, dev *gorxe.Device, addr netip.AddrPort, opts *UDOptions) (*UDConn, error) {
	c, err := withAgent(dev, func(a *Agent) (*UDConn, error) { return a.DialUD(ctx, addr, opts) })
	return c, closedErr("dial", addr, err)
}

// DialUD resolves a UD endpoint through the agent; see the package-level DialUD.
func (h *Agent) DialUD(ctx context.Context, addr netip.AddrPort, opts *UDOptions) (*UDConn, error) {
	c, err := h.a.dialUD(ctx, addr, opts)
	return c, closedErr("dial", addr, err)
}

func (a *agent) dialUD(ctx context.Context, addr netip.AddrPort, opts *UDOptions) (*UDConn, error) {
	var o UDOptions
	if opts != nil {
		o = *opts
	}
	local, peer, err := a.endpoints(addr, o.Source)
	if err != nil {
		return nil, err
	}
	pdata, err := mad.AppendCMAPrivateData(nil, &mad.CMAHeaderFields{SrcPort: local.Port(), Src: local.Addr(), Dst: peer.Addr()}, o.PrivateData)
	if err != nil {
		return nil, err
	}
	if err := a.acquire(); err != nil {
		return nil, err
	}
	peerGID := peer.Addr().As16()
	c, err := newUDConn(a, &o, local, peer, peerGID)
	if err != nil {
		a.release()
		return nil, err
	}
	reply := make(chan cm.Event, 1)
	var id cm.ConnID
	err = a.do(ctx, func(now time.Time, out *cm.Output) error {
		id, err = a.mgr.ResolveSIDR(now, cm.SIDRParams{ServiceID: mad.ServiceID(mad.PortSpaceUDP, peer.Port()),
			RemoteGID: peerGID, PrivateData: pdata}, out)
		if err != nil {
			return err
		}
		if a.ud.resolving == nil {
			a.ud.resolving = make(map[cm.ConnID]chan cm.Event)
		}
		a.ud.resolving[id] = reply
		a.routes[peerGID] = gidIndex(a.dev, local.Addr())
		return nil
	})
	if err != nil {
		return nil, errors.Join(err, c.Close())
	}
	var e cm.Event
	select {
	case e = <-reply:
	case <-ctx.Done():
		// Forget the request; an answer that raced in is dropped with it.
		_ = a.do(context.Background(), func(now time.Time, out *cm.Output) error {
			delete(a.ud.resolving, id)
			return a.mgr.Destroy(now, id, out)
		})
		return nil, errors.Join(ctx.Err(), c.Close())
	case <-a.ctx.Done():
		return nil, errors.Join(a.stopped(), c.Close())
	}
	if err := cm.SIDRResult(e); err != nil {
		return nil, errors.Join(fmt.Errorf("resolve %v: %w", addr, err), c.Close())
	}
	c.remoteQPN, c.remoteQKey, c.privateData = e.QPN, e.QKey, e.PrivateData
	return c, nil
}
