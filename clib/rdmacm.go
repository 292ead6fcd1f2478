//go:build gorxe_clib

package main

/*
#include <stdlib.h>
#include <errno.h>
#include "clib.h"
#include "cm.h"
*/
import "C"

import (
	"context"
	"encoding/binary"
	"errors"
	"net/netip"
	"sync"
	"syscall"
	"unsafe"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm"
	"github.com/gorxe/gorxe/cm/mad"
	"github.com/gorxe/gorxe/cm/rdmacm"
	"github.com/gorxe/gorxe/internal/devselect"
)

// idState is where an rdma_cm_id is in librdmacm's life cycle; calls check it as the kernel's
// RDMA-CM does (EINVAL for a call in the wrong state).
type idState uint8

const (
	idIdle idState = iota
	idBound
	idAddrResolved
	idRouteResolved
	idListening
	idRequest    // a connection request not answered yet
	idConnecting // rdma_connect or rdma_accept sent, not established yet
	idConnected
	idDisconnected
)

// cmID is the Go side of an rdma_cm_id.
type cmID struct {
	state       idState
	ps          C.enum_rdma_port_space
	ctx         *C.struct_ibv_context // the device's context (id->verbs), nil before an address names it
	local, peer netip.AddrPort

	listeners   []*rdmacm.Listener
	udListeners []*rdmacm.UDListener
	req         *rdmacm.Request
	udReq       *rdmacm.UDRequest
	conn        *rdmacm.Conn
	// agent holds the device's connection manager for a request's id: the program may destroy
	// the listening id before it answers, and the answer (or the connection it starts) must still
	// find the manager running.
	agent  *rdmacm.Agent
	groups map[netip.Addr]*rdmacm.Multicast // rdma_join_multicast
	// stop ends the goroutines working for the id (a connect or accept in flight, a listener's
	// request loop, a connection's event forwarding).
	stop context.CancelFunc
	// disconnected: the DISCONNECTED event was posted (the program sees it once).
	disconnected bool
	// manual: the program moves its own QP (connect or accept with conn_param's qp_num and no
	// id->qp), so the active side's REP is a CONNECT_RESPONSE and rdma_establish sends the RTU.
	manual, rtuSent bool
	// unretrieved holds a token while a listening id's CONNECT_REQUEST waits for the program's
	// rdma_get_cm_event (see gx_cm_listen).
	unretrieved chan struct{}
	// A request's listening id, and whether the program got its CONNECT_REQUEST: one it never
	// got dies with the listening id.
	parent    *C.struct_rdma_cm_id
	retrieved bool
}

// cmMu guards cmIDs and every cmID, and is held while an event is posted, so that an id is never
// posted to after rdma_destroy_id took it out of the table.
var (
	cmMu  sync.Mutex
	cmIDs = map[*C.struct_rdma_cm_id]*cmID{}
)

// goSafe runs f on a goroutine of its own that reports a panic on stderr instead of letting it
// end the program, as catch does for the calls from C.
func goSafe(op string, f func()) {
	go func() {
		var rc C.int
		defer catch(op, &rc)
		f()
	}()
}

// post queues an event for id, which must be in the table; cmMu is held.
func post(id, listen *C.struct_rdma_cm_id, ev C.enum_rdma_cm_event_type, status int, pdata []byte,
	conn *C.struct_rdma_conn_param) {
	var p unsafe.Pointer
	if len(pdata) > 0 {
		p = unsafe.Pointer(&pdata[0])
	}
	syncQPState(id)
	C.gx_cm_post(id, listen, C.int(ev), C.int(status), p, C.int(len(pdata)), conn, nil)
}

// syncQPState keeps ibv_qp.state true for the id's QP, which the connection manager moved
// without ibv_modify_qp: programs read it, and post.c takes a QP below RTS for one that refuses
// sends.
func syncQPState(id *C.struct_rdma_cm_id) {
	if qp := qpOf(id); qp != nil {
		if a, _, err := qp.Query(); err == nil {
			id.qp.state = uint32(a.State)
		}
	}
}

// cmCall runs f on the id's state with cmMu held, turning its error into an errno and a panic
// into EIO.
func cmCall(op string, id *C.struct_rdma_cm_id, f func(s *cmID) error) (rc C.int) {
	defer catch(op, &rc)
	cmMu.Lock()
	defer cmMu.Unlock()
	s := cmIDs[id]
	if s == nil {
		return C.int(syscall.EINVAL)
	}
	return errnoOf(f(s))
}

//export gx_cm_create
func gx_cm_create(id *C.struct_rdma_cm_id) (rc C.int) {
	defer catch("rdma_create_id", &rc)
	cmMu.Lock()
	defer cmMu.Unlock()
	cmIDs[id] = &cmID{ps: id.ps, stop: func() {}}
	return 0
}

//export gx_cm_destroy
func gx_cm_destroy(id *C.struct_rdma_cm_id) (rc C.int) {
	defer catch("rdma_destroy_id", &rc)
	cmMu.Lock()
	s := cmIDs[id]
	if s == nil {
		cmMu.Unlock()
		return C.int(syscall.EINVAL)
	}
	// Events still unacked after rdma_destroy_id's bounded wait (cm.c): EBUSY, not a hang.
	if C.gx_cm_unacked(id) > 0 {
		cmMu.Unlock()
		return C.int(syscall.EBUSY)
	}
	delete(cmIDs, id)
	C.gx_cm_drop_events(id)
	// Requests whose CONNECT_REQUEST the program never got go with their listening id, as the
	// kernel destroys them: refused, their ids freed.
	var orphans []*C.struct_rdma_cm_id
	var orphanStates []*cmID
	for c, cs := range cmIDs {
		// An event popped by a reader racing with this destroy counts as retrieved: the C side
		// counts it unacked before it lets go of the channel, which gx_cm_drop_events took.
		if cs.parent == id && !cs.retrieved && C.gx_cm_unacked(c) == 0 {
			delete(cmIDs, c)
			orphans, orphanStates = append(orphans, c), append(orphanStates, cs)
		}
	}
	cmMu.Unlock()
	for i, cs := range orphanStates {
		cs.rejectRequest(nil, false)
		cs.agent.Close()
		C.gx_cm_free_id(orphans[i])
	}
	s.stop()
	for _, l := range s.listeners {
		l.Close()
	}
	for _, l := range s.udListeners {
		l.Close()
	}
	if s.state == idRequest {
		s.rejectRequest(nil, false)
	}
	for _, m := range s.groups {
		_ = m.Leave()
	}
	if s.conn != nil {
		s.conn.Close()
	}
	if s.agent != nil {
		s.agent.Close()
	}
	return 0
}

// addrOf reads a sockaddr (IPv4 or IPv6) into an address and port.
func addrOf(sa *C.struct_sockaddr) (netip.AddrPort, bool) {
	var ip [16]byte
	var port C.uint16_t
	var scope C.uint32_t
	switch C.gx_sockaddr(sa, (*C.uint8_t)(&ip[0]), &port, &scope) {
	case C.AF_INET:
		return netip.AddrPortFrom(netip.AddrFrom16(ip).Unmap(), uint16(port)), true
	case C.AF_INET6:
		a := netip.AddrFrom16(ip).WithZone(devselect.ZoneOf(uint32(scope)))
		return netip.AddrPortFrom(a, uint16(port)), true
	}
	return netip.AddrPort{}, false
}

// setAddr writes an address and port into one of the id's sockaddr_storage fields.
func setAddr(dst *C.struct_sockaddr_storage, ap netip.AddrPort) {
	a := ap.Addr()
	ip := a.As16()
	scope := devselect.ScopeOf(a.Zone())
	is4 := C.int(0)
	if a.Is4() {
		is4 = 1
	}
	C.gx_set_sockaddr(dst, (*C.uint8_t)(&ip[0]), is4, C.uint16_t(ap.Port()), C.uint32_t(scope))
}

// cmContexts returns the library's device contexts (librdmacm opens every device).
func cmContexts() []*C.struct_ibv_context {
	var out []*C.struct_ibv_context
	for i := 0; ; i++ {
		c := C.gx_cm_context(C.int(i))
		if c == nil {
			return out
		}
		out = append(out, c)
	}
}

// ownerOf returns the context whose device has address a (on a's interface, for a link-local a).
func ownerOf(a netip.Addr) *C.struct_ibv_context {
	for _, c := range cmContexts() {
		dc := contextOf(c)
		if dc == nil {
			continue
		}
		for _, l := range dc.attrDevice().LocalAddrs() {
			if devselect.SameAddr(l.Addr(), a) {
				return c
			}
		}
	}
	return nil
}

// routeTo returns the context and source address a connection to dst leaves from. As the
// kernel's rdma_resolve_addr does, it asks the routing table for the source address (a zoned
// link-local dst leaves from its zone's interface) and takes the device that owns it. When no
// device owns that address (GORXE_ADDR gave the program one address of the host), it takes the
// first device with an address of dst's family, on dst's interface for a zoned link-local dst,
// preferring one as loopback and as link-local as dst.
func routeTo(dst netip.Addr) (*C.struct_ibv_context, netip.Addr) {
	if src, err := devselect.RouteSource(dst); err == nil {
		if c := ownerOf(src); c != nil {
			return c, src
		}
	}
	scope := uint32(0)
	if dst.Is6() && dst.IsLinkLocalUnicast() {
		scope = devselect.ScopeOf(dst.Zone())
	}
	var firstC *C.struct_ibv_context
	var first netip.Addr
	for _, c := range cmContexts() {
		dc := contextOf(c)
		if dc == nil {
			continue
		}
		dev := dc.attrDevice()
		if scope != 0 && devselect.ScopeOf(dev.NetDev()) != scope {
			continue
		}
		for _, l := range dev.LocalAddrs() {
			a := l.Addr().Unmap()
			if a.Is4() != dst.Is4() {
				continue
			}
			if a.IsLoopback() == dst.IsLoopback() && a.IsLinkLocalUnicast() == dst.IsLinkLocalUnicast() {
				return c, a
			}
			if firstC == nil {
				firstC, first = c, a
			}
		}
	}
	return firstC, first
}

//export gx_cm_bind
func gx_cm_bind(id *C.struct_rdma_cm_id, sa *C.struct_sockaddr) C.int {
	return cmCall("rdma_bind_addr", id, func(s *cmID) error {
		ap, ok := addrOf(sa)
		if !ok {
			return syscall.EAFNOSUPPORT
		}
		if s.state != idIdle {
			return syscall.EINVAL
		}
		return s.bind(id, ap)
	})
}

// bind binds the idle id to ap: an address of one device, or the wildcard (every device); port 0
// takes an ephemeral port.
func (s *cmID) bind(id *C.struct_rdma_cm_id, ap netip.AddrPort) error {
	if !ap.Addr().IsUnspecified() {
		var err error
		if s.ctx, err = deviceOwning(ap.Addr()); err != nil {
			return err
		}
		id.verbs, id.port_num = s.ctx, 1
	}
	if ap.Port() == 0 {
		ap = netip.AddrPortFrom(ap.Addr(), rdmacm.EphemeralPort())
	}
	s.local, s.state = ap, idBound
	setAddr(srcAddr(id), ap)
	return nil
}

// deviceOwning returns the context of the device a program binds to address a, with the kernel's
// errno when there is none: EINVAL for a link-local address without a scope (no interface named),
// ENODEV for one no device has on the scope's interface, EADDRNOTAVAIL for any other address no
// device has.
func deviceOwning(a netip.Addr) (*C.struct_ibv_context, error) {
	if devselect.LinkLocalNeedsScope(a) {
		return nil, syscall.EINVAL
	}
	if c := ownerOf(a); c != nil {
		return c, nil
	}
	if a.Is6() && a.IsLinkLocalUnicast() {
		return nil, syscall.ENODEV
	}
	return nil, syscall.EADDRNOTAVAIL
}

// srcAddr and dstAddr are the id's route.addr fields (unions in C).
func srcAddr(id *C.struct_rdma_cm_id) *C.struct_sockaddr_storage {
	return (*C.struct_sockaddr_storage)(unsafe.Pointer(&id.route.addr.anon0[0]))
}

func dstAddr(id *C.struct_rdma_cm_id) *C.struct_sockaddr_storage {
	return (*C.struct_sockaddr_storage)(unsafe.Pointer(&id.route.addr.anon1[0]))
}

//export gx_cm_resolve_addr
func gx_cm_resolve_addr(id *C.struct_rdma_cm_id, src, dst *C.struct_sockaddr) C.int {
	return cmCall("rdma_resolve_addr", id, func(s *cmID) error {
		peer, ok := addrOf(dst)
		if !ok {
			return syscall.EAFNOSUPPORT
		}
		if s.state != idIdle && s.state != idBound {
			return syscall.EINVAL
		}
		if src != nil && s.state == idIdle {
			if ap, ok := addrOf(src); ok && (!ap.Addr().IsUnspecified() || ap.Port() != 0) {
				if !ap.Addr().IsUnspecified() {
					var err error
					if s.ctx, err = deviceOwning(ap.Addr()); err != nil {
						return err
					}
				}
				s.local = ap
			}
		}
		local := s.local.Addr()
		if !local.IsValid() || local.IsUnspecified() {
			s.ctx, local = routeTo(peer.Addr().Unmap())
		}
		port := s.local.Port()
		if port == 0 {
			port = rdmacm.EphemeralPort()
		}
		if s.ctx == nil || local.Is4() != peer.Addr().Unmap().Is4() {
			// No device reaches the peer: the kernel reports it as an event, not an errno.
			post(id, nil, C.RDMA_CM_EVENT_ADDR_ERROR, -int(syscall.EHOSTUNREACH), nil, nil)
			return nil
		}
		s.local, s.peer = netip.AddrPortFrom(local, port), netip.AddrPortFrom(peer.Addr().Unmap(), peer.Port())
		id.verbs, id.port_num = s.ctx, 1
		setAddr(srcAddr(id), s.local)
		setAddr(dstAddr(id), s.peer)
		s.state = idAddrResolved
		post(id, nil, C.RDMA_CM_EVENT_ADDR_RESOLVED, 0, nil, nil)
		return nil
	})
}

//export gx_cm_resolve_route
func gx_cm_resolve_route(id *C.struct_rdma_cm_id) C.int {
	return cmCall("rdma_resolve_route", id, func(s *cmID) error {
		if s.state != idAddrResolved {
			return syscall.EINVAL
		}
		s.state = idRouteResolved
		setPath(id, s)
		post(id, nil, C.RDMA_CM_EVENT_ROUTE_RESOLVED, 0, nil, nil)
		return nil
	})
}

// setPath fills the id's path record, the one RDMA-CM resolves on RoCE (cm.RDMACMPath: the two
// GIDs, the flow label of the two ports, hop limit 64, the port's MTU, the default P_Key), and
// points route.path_rec at it.
func setPath(id *C.struct_rdma_cm_id, s *cmID) {
	g := (*C.struct_gx_id)(unsafe.Pointer(id))
	mtu := gorxe.MTU4096
	if dev, rc := deviceOf(s.ctx); rc == 0 {
		if port, err := dev.QueryPort(1); err == nil {
			mtu = port.ActiveMTU
		}
	}
	p := cm.RDMACMPath(s.local, s.peer, mad.MTU(mtu))
	rec := &g.path
	*rec = C.struct_ibv_sa_path_rec{}
	*(*[16]byte)(unsafe.Pointer(&rec.sgid)) = netip.AddrFrom16(p.LocalGID).Unmap().As16()
	*(*[16]byte)(unsafe.Pointer(&rec.dgid)) = netip.AddrFrom16(p.RemoteGID).Unmap().As16()
	rec.flow_label = C.__be32(bigEndian32(p.FlowLabel))
	rec.hop_limit, rec.reversible, rec.numb_path = C.uint8_t(p.HopLimit), 1, 1
	if g.tos_set != 0 {
		rec.traffic_class = C.uint8_t(g.tos)
	}
	rec.pkey = C.__be16(bigEndian16(gorxe.DefaultPKey))
	rec.mtu_selector, rec.mtu = 2, C.uint8_t(p.MTU) // 2: exactly this MTU
	id.route.path_rec, id.route.num_paths = rec, 1
}

// bigEndian32 and bigEndian16 give the in-memory value of a network-order field.
func bigEndian32(v uint32) uint32 {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], v)
	return binary.NativeEndian.Uint32(b[:])
}

func bigEndian16(v uint16) uint16 {
	var b [2]byte
	binary.BigEndian.PutUint16(b[:], v)
	return binary.NativeEndian.Uint16(b[:])
}

//export gx_cm_listen
func gx_cm_listen(id *C.struct_rdma_cm_id, backlog C.int) C.int {
	return cmCall("rdma_listen", id, func(s *cmID) error {
		if s.state == idListening {
			return nil // librdmacm lets a program listen again to change the backlog
		}
		if s.state == idIdle {
			// As the kernel's rdma_listen does, an unbound id binds to the IPv4 wildcard and an
			// ephemeral port first (rdma_get_src_port tells which).
			if err := s.bind(id, netip.AddrPortFrom(netip.IPv4Unspecified(), 0)); err != nil {
				return err
			}
		}
		if s.state != idBound {
			return syscall.EINVAL
		}
		ctxs := []*C.struct_ibv_context{s.ctx}
		if s.ctx == nil {
			ctxs = cmContexts() // a wildcard address listens on every device
		}
		ctx, cancel := context.WithCancel(context.Background())
		var ls []*rdmacm.Listener
		var uls []*rdmacm.UDListener
		var ds []*C.struct_ibv_context
		for _, c := range ctxs {
			dev, rc := deviceOf(c)
			if rc != 0 {
				continue
			}
			opts := rdmacm.Options{Backlog: listenerBacklog(int(backlog))}
			var err error
			if s.ps == C.RDMA_PS_TCP {
				var l *rdmacm.Listener
				if l, err = rdmacm.Listen(ctx, dev, s.local, &opts); err == nil {
					ls = append(ls, l)
				}
			} else {
				var l *rdmacm.UDListener
				if l, err = rdmacm.ListenUD(ctx, dev, s.local, &rdmacm.UDOptions{Options: opts}); err == nil {
					uls = append(uls, l)
				}
			}
			if err != nil {
				for _, l := range ls {
					l.Close()
				}
				for _, l := range uls {
					l.Close()
				}
				cancel()
				if errors.Is(err, cm.ErrServiceIDInUse) {
					return syscall.EADDRINUSE
				}
				return err
			}
			ds = append(ds, c)
		}
		if len(ds) == 0 {
			cancel()
			return syscall.ENODEV
		}
		s.listeners, s.udListeners, s.stop, s.state = ls, uls, cancel, idListening
		s.unretrieved = make(chan struct{}, 1)
		for i, l := range ls {
			goSafe("rdma_listen", func() { takeRequests(ctx, id, s, l.Next, ds[i]) })
		}
		for i, l := range uls {
			goSafe("rdma_listen", func() { takeRequests(ctx, id, s, l.Next, ds[i]) })
		}
		return nil
	})
}

// maxBacklog is the kernel's default and largest rdma_listen backlog (net.rdma_ucm.max_backlog).
const maxBacklog = 1024

// listenerBacklog sizes the manager's backlog for rdma_listen's. The kernel counts a request
// until the program retrieves its CONNECT_REQUEST, and drops REQs beyond the backlog (the peer
// retransmits them). Here each listener's requests wait in the manager's backlog, and one more
// waits as an event the program has not retrieved yet (takeRequests takes the next only then), so
// the manager's holds one less: exact from a backlog of 2, one more than asked for 1.
func listenerBacklog(backlog int) int {
	if backlog <= 0 || backlog > maxBacklog {
		backlog = maxBacklog
	}
	return max(backlog-1, 1)
}

//export gx_cm_request_retrieved
func gx_cm_request_retrieved(listen, child *C.struct_rdma_cm_id) {
	var rc C.int
	defer catch("rdma_get_cm_event", &rc)
	cmMu.Lock()
	defer cmMu.Unlock()
	if s := cmIDs[child]; s != nil {
		s.retrieved = true
	}
	if s := cmIDs[listen]; s != nil && s.unretrieved != nil {
		select {
		case <-s.unretrieved:
		default:
		}
	}
}

// request is a connection request of either port space, as the new id's event shows it.
type request interface {
	*rdmacm.Request | *rdmacm.UDRequest
	PrivateData() []byte
	LocalAddr() netip.AddrPort
	RemoteAddr() netip.AddrPort
	Reject([]byte) error
}

// takeRequests turns each connection request a listener receives (next) into a new id and a
// CONNECT_REQUEST event on the listening id's channel.
func takeRequests[R request](ctx context.Context, listen *C.struct_rdma_cm_id, ls *cmID,
	next func(context.Context) (R, error), dctx *C.struct_ibv_context) {
	for {
		// One CONNECT_REQUEST at a time waits for the program (see listenerBacklog).
		select {
		case ls.unretrieved <- struct{}{}:
		case <-ctx.Done():
			return
		}
		req, err := next(ctx)
		if err != nil {
			return
		}
		if !postRequest(listen, ls, req, dctx) {
			_ = req.Reject(nil)
			gx_cm_request_retrieved(listen, nil)
		}
	}
}

func postRequest[R request](listen *C.struct_rdma_cm_id, ls *cmID, req R, dctx *C.struct_ibv_context) bool {
	cmMu.Lock()
	defer cmMu.Unlock()
	if cmIDs[listen] != ls {
		return false
	}
	dev, rc := deviceOf(dctx)
	if rc != 0 {
		return false
	}
	agent, err := rdmacm.Open(dev, rdmacm.Config{})
	if err != nil {
		return false
	}
	child := C.gx_cm_child(listen)
	if child == nil {
		agent.Close()
		return false
	}
	child.verbs = dctx
	s := &cmID{state: idRequest, ps: ls.ps, ctx: dctx, local: req.LocalAddr(), peer: req.RemoteAddr(),
		agent: agent, parent: listen, stop: func() {}}
	cmIDs[child] = s
	setAddr(srcAddr(child), s.local)
	setAddr(dstAddr(child), s.peer)
	pdata := req.PrivateData()
	var p unsafe.Pointer
	if len(pdata) > 0 {
		p = unsafe.Pointer(&pdata[0])
	}
	switch r := any(req).(type) {
	case *rdmacm.Request:
		s.req = r
		setRemoteECE(child, r.RemoteECE())
		param := C.struct_rdma_conn_param{responder_resources: C.uint8_t(r.ResponderResources()),
			initiator_depth: C.uint8_t(r.InitiatorDepth())}
		C.gx_cm_post(child, listen, C.RDMA_CM_EVENT_CONNECT_REQUEST, 0, p, C.int(len(pdata)), &param, nil)
	case *rdmacm.UDRequest:
		s.udReq = r
		var ud C.struct_rdma_ud_param
		C.gx_cm_post(child, listen, C.RDMA_CM_EVENT_CONNECT_REQUEST, 0, p, C.int(len(pdata)), nil, &ud)
	}
	return true
}

// rejectRequest refuses the id's request: rdma_reject's REJ, or with ece rdma_reject_ece's (a UD
// request's SIDR_REP says "rejected" either way, as the kernel's does).
func (s *cmID) rejectRequest(pdata []byte, ece bool) error {
	s.state = idDisconnected
	switch {
	case s.udReq != nil:
		return s.udReq.Reject(pdata)
	case ece:
		return s.req.RejectECE(pdata)
	}
	return s.req.Reject(pdata)
}

// qpOf returns the gorxe QP of the id's QP (rdma_create_qp).
func qpOf(id *C.struct_rdma_cm_id) *gorxe.QP {
	if id.qp == nil {
		return nil
	}
	st := lookup(&objects, objects.qps, id.qp)
	if st == nil {
		return nil
	}
	return st.qp
}

// connSetup is what rdma_connect and rdma_accept check and gather first: the id's QP, or the one p
// names (which the program then moves itself, s.manual), its device, and the connection's
// options (connOptions).
func connSetup(s *cmID, id *C.struct_rdma_cm_id, p *C.struct_rdma_conn_param) (*gorxe.Device, rdmacm.Options, error) {
	qp := qpOf(id)
	if qp == nil && (p == nil || p.qp_num == 0) {
		return nil, rdmacm.Options{}, syscall.EINVAL // no QP on the id, and none named
	}
	dev, rc := deviceOf(s.ctx)
	if rc != 0 {
		return nil, rdmacm.Options{}, syscall.Errno(rc)
	}
	o, err := connOptions(id, dev, qp, p)
	if err == nil && qp == nil {
		o.QPN, s.manual = uint32(p.qp_num), true
	}
	// As librdmacm's RDMA_CM_EVENT_DISCONNECTED, a peer's DREQ leaves the QP to the program, whose
	// rdma_disconnect or rdma_destroy_id moves it to the error state: libfabric's rxm reads its
	// last completions after the peer has hung up, and flushed receives among them failed it.
	o.LeaveQPOnDREQ = true
	return dev, o, err
}

// connOptions turns rdma_conn_param and the id's options into the connection's options, for an id
// on dev. A nil param takes librdmacm's defaults. RDMA_MAX_RESP_RES and RDMA_MAX_INIT_DEPTH ask
// for the device's most (max_qp_rd_atom, max_qp_init_rd_atom), which rdma_accept bounds by what
// the request offered, as it bounds any value; another value above the device's is EINVAL, as
// librdmacm checks it. libfabric's verbs provider asks for both.
func connOptions(id *C.struct_rdma_cm_id, dev *gorxe.Device, qp *gorxe.QP, p *C.struct_rdma_conn_param) (rdmacm.Options, error) {
	g := (*C.struct_gx_id)(unsafe.Pointer(id))
	o := rdmacm.Options{QP: qp, AckTimeout: uint8(g.ack_timeout)}
	if g.tos_set != 0 {
		o.TrafficClass = uint8(g.tos)
	}
	if p == nil {
		return o, nil
	}
	if p.private_data != nil && p.private_data_len > 0 {
		o.PrivateData = C.GoBytes(p.private_data, C.int(p.private_data_len))
	}
	attr, err := dev.Query()
	if err != nil {
		return o, err
	}
	depth := func(v C.uint8_t, sentinel, most int) (uint8, error) {
		switch {
		case int(v) == sentinel:
			return uint8(most), nil
		case int(v) > most:
			return 0, syscall.EINVAL
		}
		return uint8(v), nil
	}
	if o.ResponderResources, err = depth(p.responder_resources, C.RDMA_MAX_RESP_RES, attr.MaxQPRdAtom); err != nil {
		return o, err
	}
	if o.InitiatorDepth, err = depth(p.initiator_depth, C.RDMA_MAX_INIT_DEPTH, attr.MaxQPInitRdAtom); err != nil {
		return o, err
	}
	o.NoRDMARead = p.responder_resources == 0 && p.initiator_depth == 0
	o.RetryCount, o.ZeroRetryCount = uint8(p.retry_count), p.retry_count == 0
	o.RNRRetryCount, o.ZeroRNRRetryCount = uint8(p.rnr_retry_count), p.rnr_retry_count == 0
	return o, nil
}

// failure posts the event librdmacm reports for a connection that was not established.
func failure(err error) (C.enum_rdma_cm_event_type, int) {
	var rej *cm.RejectError
	switch {
	case errors.As(err, &rej):
		return C.RDMA_CM_EVENT_REJECTED, int(rej.Reason)
	case errors.Is(err, cm.ErrTimeout):
		return C.RDMA_CM_EVENT_UNREACHABLE, -int(syscall.ETIMEDOUT)
	case errors.Is(err, rdmacm.ErrECEVendor):
		// librdmacm's status for a REP of another vendor is its ERR(EINVAL) helper's -1.
		return C.RDMA_CM_EVENT_CONNECT_ERROR, -1
	}
	return C.RDMA_CM_EVENT_CONNECT_ERROR, -int(errnoOf(err))
}

//export gx_cm_connect
func gx_cm_connect(id *C.struct_rdma_cm_id, p *C.struct_rdma_conn_param) C.int {
	return cmCall("rdma_connect", id, func(s *cmID) error {
		if s.state != idRouteResolved {
			return syscall.EINVAL
		}
		dev, o, err := connSetup(s, id, p)
		if err != nil {
			return err
		}
		// librdmacm sends the local ECE as it is; the kernel keeps the vendor ID's 24 bits. With
		// the id's QP, librdmacm refuses a REP of another vendor: CONNECT_ERROR (see failure).
		g := (*C.struct_gx_id)(unsafe.Pointer(id))
		o.ECE = cm.ECE{VendorID: uint32(g.local_ece.vendor_id) & mad.QPNMask, Options: uint32(g.local_ece.options)}
		o.CheckECEVendor = o.QP != nil
		o.Source = s.local
		ctx, cancel := context.WithCancel(context.Background())
		s.stop, s.state = cancel, idConnecting
		if s.ps != C.RDMA_PS_TCP {
			uo := rdmacm.UDOptions{Options: o, TrafficClass: o.TrafficClass}
			goSafe("rdma_connect", func() {
				c, err := rdmacm.DialUD(ctx, dev, s.peer, &uo)
				resolvedUD(id, s, c, err)
			})
			return nil
		}
		goSafe("rdma_connect", func() {
			c, err := rdmacm.Dial(ctx, dev, s.peer, &o)
			established(ctx, id, s, c, err)
		})
		return nil
	})
}

// established reports how a connect or accept ended, and forwards the connection's later events.
func established(ctx context.Context, id *C.struct_rdma_cm_id, s *cmID, c *rdmacm.Conn, err error) {
	cmMu.Lock()
	if cmIDs[id] != s {
		known := s.conn // rdma_destroy_id closes the connection it knows
		cmMu.Unlock()
		if c != nil && c != known {
			c.Close()
		}
		return
	}
	if err != nil {
		s.state = idDisconnected
		if failed := s.conn; failed != nil { // an accepted request whose RTU never came
			s.conn = nil
			defer failed.Close()
		}
		ev, status := failure(err)
		var rej *rdmacm.RejectedError
		var pdata []byte
		if errors.As(err, &rej) {
			pdata = rej.PrivateData
		}
		post(id, nil, ev, status, pdata, nil)
		cmMu.Unlock()
		return
	}
	s.conn, s.state = c, idConnected
	ev := C.enum_rdma_cm_event_type(C.RDMA_CM_EVENT_ESTABLISHED)
	if s.manual && s.req == nil {
		// The REP arrived; the program moves its QP and calls rdma_establish, and may read the
		// REP's ECE first.
		ev = C.RDMA_CM_EVENT_CONNECT_RESPONSE
		setRemoteECE(id, c.RemoteECE())
	}
	post(id, nil, ev, 0, c.PrivateData(), nil)
	cmMu.Unlock()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.Done():
			return
		case e := <-c.Events():
			if e.Type == rdmacm.EventDisconnected {
				disconnected(id, s)
			}
		}
	}
}

// setRemoteECE records the peer's ECE on the id, for rdma_get_remote_ece.
func setRemoteECE(id *C.struct_rdma_cm_id, e cm.ECE) {
	g := (*C.struct_gx_id)(unsafe.Pointer(id))
	g.remote_ece.vendor_id, g.remote_ece.options = C.uint32_t(e.VendorID), C.uint32_t(e.Options)
}

// disconnected posts the id's DISCONNECTED event, once.
func disconnected(id *C.struct_rdma_cm_id, s *cmID) {
	cmMu.Lock()
	defer cmMu.Unlock()
	if cmIDs[id] != s || s.disconnected {
		return
	}
	s.disconnected, s.state = true, idDisconnected
	post(id, nil, C.RDMA_CM_EVENT_DISCONNECTED, 0, nil, nil)
}

//export gx_cm_accept
func gx_cm_accept(id *C.struct_rdma_cm_id, p *C.struct_rdma_conn_param) C.int {
	return cmCall("rdma_accept", id, func(s *cmID) error {
		if s.state != idRequest {
			return syscall.EINVAL
		}
		_, o, err := connSetup(s, id, p)
		if err != nil {
			return err
		}
		if s.udReq != nil {
			// A SIDR_REP names the QP; UD has no connection, and the passive side no event.
			c, err := s.udReq.Accept(context.Background(), &rdmacm.UDOptions{Options: o})
			if err != nil {
				return err
			}
			s.state = idConnected
			return c.Close() // the endpoint's own address handle; the QP is the program's
		}
		// As librdmacm's: the QP is in RTS and the REP has left when rdma_accept returns;
		// ESTABLISHED follows the RTU. The REP carries the REQ's ECE vendor ID with the local
		// options, librdmacm's answer.
		o.RTSAtAccept = true
		g := (*C.struct_gx_id)(unsafe.Pointer(id))
		o.ECE = cm.ECE{VendorID: uint32(g.remote_ece.vendor_id), Options: uint32(g.local_ece.options)}
		c, err := s.req.SendREP(context.Background(), &o)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithCancel(context.Background())
		s.stop, s.state, s.conn = cancel, idConnecting, c
		goSafe("rdma_accept", func() {
			err := c.WaitEstablished(ctx)
			if err != nil {
				c = nil
			}
			established(ctx, id, s, c, err)
		})
		return nil
	})
}

//export gx_cm_reject
func gx_cm_reject(id *C.struct_rdma_cm_id, pdata unsafe.Pointer, n C.int, ece C.int) C.int {
	return cmCall("rdma_reject", id, func(s *cmID) error {
		if s.state != idRequest {
			return syscall.EINVAL
		}
		var b []byte
		if pdata != nil && n > 0 {
			b = C.GoBytes(pdata, n)
		}
		return s.rejectRequest(b, ece != 0)
	})
}

//export gx_cm_establish
func gx_cm_establish(id *C.struct_rdma_cm_id) C.int {
	return cmCall("rdma_establish", id, func(s *cmID) error {
		switch {
		case s.manual && s.req == nil && s.conn != nil && !s.rtuSent:
			s.rtuSent = true
			return s.conn.SendRTU()
		case s.state == idConnected || s.state == idConnecting:
			// With the id's own QP the RTU left as soon as the REP arrived: nothing to do.
			return nil
		}
		return syscall.EINVAL
	})
}

//export gx_cm_disconnect
func gx_cm_disconnect(id *C.struct_rdma_cm_id) C.int {
	return cmCall("rdma_disconnect", id, func(s *cmID) error {
		if s.conn == nil {
			return syscall.EINVAL
		}
		// The QP goes to the error state and the DREQ leaves; the DISCONNECTED event follows
		// the peer's DREP (or its silence), as the kernel reports it.
		return s.conn.SendDREQ()
	})
}

//export gx_cm_migrate
func gx_cm_migrate(id *C.struct_rdma_cm_id, ch *C.struct_rdma_event_channel) C.int {
	return cmCall("rdma_migrate_id", id, func(s *cmID) error {
		id.channel = ch
		return nil
	})
}

//export gx_cm_init_qp_attr
func gx_cm_init_qp_attr(id *C.struct_rdma_cm_id, out *C.struct_ibv_qp_attr, mask *C.int) C.int {
	return cmCall("rdma_init_qp_attr", id, func(s *cmID) error {
		switch out.qp_state {
		case C.IBV_QPS_INIT:
			out.port_num, out.pkey_index = 1, 0
			m := C.IBV_QP_STATE | C.IBV_QP_PKEY_INDEX | C.IBV_QP_PORT
			if s.ps == C.RDMA_PS_TCP {
				out.qp_access_flags = C.IBV_ACCESS_REMOTE_WRITE | C.IBV_ACCESS_REMOTE_READ
				m |= C.IBV_QP_ACCESS_FLAGS
			} else {
				out.qkey = C.RDMA_UDP_QKEY
				m |= C.IBV_QP_QKEY
			}
			*mask = C.int(m)
			return nil
		case C.IBV_QPS_RTR, C.IBV_QPS_RTS:
		default:
			return syscall.EINVAL
		}
		var attrs cm.QPAttrs
		switch {
		case s.conn != nil:
			attrs = s.conn.Attrs()
		case s.req != nil:
			attrs = s.req.Attrs()
		default:
			return syscall.EINVAL // nothing negotiated yet
		}
		dev, rc := deviceOf(s.ctx)
		if rc != 0 {
			return syscall.Errno(rc)
		}
		if out.qp_state == C.IBV_QPS_RTR {
			mtu := gorxe.MTU(attrs.PathMTU)
			if port, err := dev.QueryPort(1); err == nil {
				mtu = min(mtu, port.ActiveMTU)
			}
			local := netip.AddrFrom16(attrs.LocalGID).Unmap()
			setAHAttr(&out.ah_attr, gorxe.AHAttr{IsGlobal: true, PortNum: 1, SL: attrs.SL, GRH: gorxe.GlobalRoute{
				DGID: attrs.RemoteGID, FlowLabel: attrs.FlowLabel, SGIDIndex: uint8(max(gidIndexOf(dev, local), 0)),
				HopLimit: attrs.HopLimit, TrafficClass: attrs.TrafficClass}})
			out.path_mtu = C.enum_ibv_mtu(mtu)
			out.dest_qp_num, out.rq_psn = C.uint32_t(attrs.RemoteQPN), C.uint32_t(attrs.RQPSN)
			out.max_dest_rd_atomic, out.min_rnr_timer = C.uint8_t(attrs.MaxDestRdAtomic), C.uint8_t(attrs.MinRNRTimer)
			*mask = C.IBV_QP_STATE | C.IBV_QP_AV | C.IBV_QP_PATH_MTU | C.IBV_QP_DEST_QPN | C.IBV_QP_RQ_PSN |
				C.IBV_QP_MAX_DEST_RD_ATOMIC | C.IBV_QP_MIN_RNR_TIMER
			return nil
		}
		out.sq_psn, out.timeout = C.uint32_t(attrs.SQPSN), C.uint8_t(attrs.Timeout)
		out.retry_cnt, out.rnr_retry = C.uint8_t(attrs.RetryCount), C.uint8_t(attrs.RNRRetry)
		out.max_rd_atomic = C.uint8_t(attrs.MaxRdAtomic)
		*mask = C.IBV_QP_STATE | C.IBV_QP_SQ_PSN | C.IBV_QP_TIMEOUT | C.IBV_QP_RETRY_CNT | C.IBV_QP_RNR_RETRY |
			C.IBV_QP_MAX_QP_RD_ATOMIC
		return nil
	})
}

// resolvedUD reports how a UD id's rdma_connect (a service ID resolution) ended: ESTABLISHED with
// the address vector, QPN and Q_Key of the peer, or UNREACHABLE with the SIDR_REP's status or
// -ETIMEDOUT, as the kernel reports them.
func resolvedUD(id *C.struct_rdma_cm_id, s *cmID, c *rdmacm.UDConn, err error) {
	var ud C.struct_rdma_ud_param
	var pdata []byte
	ev, status := C.enum_rdma_cm_event_type(C.RDMA_CM_EVENT_ESTABLISHED), 0
	var sidr *cm.SIDRError
	switch {
	case errors.As(err, &sidr):
		ev, status = C.RDMA_CM_EVENT_UNREACHABLE, int(sidr.Status)
	case errors.Is(err, cm.ErrTimeout):
		ev, status = C.RDMA_CM_EVENT_UNREACHABLE, -int(syscall.ETIMEDOUT)
	case err != nil:
		ev, status = C.RDMA_CM_EVENT_UNREACHABLE, -int(errnoOf(err))
	default:
		// The endpoint's address handle is the path RDMA-CM resolved to the peer.
		setAHAttr(&ud.ah_attr, c.AH().Attr())
		ud.qp_num, ud.qkey = C.uint32_t(c.RemoteQPN()), C.uint32_t(c.RemoteQKey())
		pdata = c.PrivateData()
		c.Close() // the endpoint's own address handle; the QP is the program's
	}
	cmMu.Lock()
	defer cmMu.Unlock()
	if cmIDs[id] != s {
		return
	}
	if ev == C.RDMA_CM_EVENT_ESTABLISHED {
		s.state = idConnected
	} else {
		s.state = idDisconnected
	}
	var p unsafe.Pointer
	if len(pdata) > 0 {
		p = unsafe.Pointer(&pdata[0])
	}
	C.gx_cm_post(id, nil, C.int(ev), C.int(status), p, C.int(len(pdata)), nil, &ud)
}

// gidIndexOf returns the index of addr's GID in the device's table, or -1.
func gidIndexOf(dev *gorxe.Device, addr netip.Addr) int {
	want := gorxe.GIDFromAddr(addr.WithZone(""))
	for _, e := range dev.GIDTable() {
		if e.Usable && e.GID == want {
			return e.Index
		}
	}
	return -1
}

//export gx_cm_join
func gx_cm_join(id *C.struct_rdma_cm_id, sa *C.struct_sockaddr, sendOnly C.int, mcContext unsafe.Pointer) C.int {
	return cmCall("rdma_join_multicast", id, func(s *cmID) error {
		group, ok := addrOf(sa)
		if !ok {
			return syscall.EAFNOSUPPORT
		}
		if s.ctx == nil || (s.state != idBound && s.state != idAddrResolved && s.state != idRouteResolved) {
			return syscall.EINVAL
		}
		if s.ps != C.RDMA_PS_UDP && s.ps != C.RDMA_PS_IPOIB {
			return syscall.EINVAL
		}
		qp := qpOf(id)
		if qp == nil {
			return syscall.EOPNOTSUPP // joins before the QP exists: not yet
		}
		g := group.Addr().Unmap()
		if _, dup := s.groups[g]; dup {
			return syscall.EADDRINUSE
		}
		dev, rc := deviceOf(s.ctx)
		if rc != 0 {
			return syscall.Errno(rc)
		}
		ps := mad.PortSpaceUDP
		if s.ps == C.RDMA_PS_IPOIB {
			ps = mad.PortSpaceIPoIB
		}
		m, err := rdmacm.JoinMulticast(context.Background(), dev, qp, g,
			&rdmacm.JoinOptions{PortSpace: ps, SendOnly: sendOnly != 0, Source: s.local.Addr().Unmap()})
		if err != nil {
			return err
		}
		if s.groups == nil {
			s.groups = map[netip.Addr]*rdmacm.Multicast{}
		}
		s.groups[g] = m
		var ud C.struct_rdma_ud_param
		setAHAttr(&ud.ah_attr, m.AH)
		ud.qp_num, ud.qkey = C.uint32_t(m.QPN), C.uint32_t(m.QKey)
		C.gx_cm_post_mcast(id, &ud, mcContext)
		return nil
	})
}

//export gx_cm_leave
func gx_cm_leave(id *C.struct_rdma_cm_id, sa *C.struct_sockaddr) C.int {
	return cmCall("rdma_leave_multicast", id, func(s *cmID) error {
		group, ok := addrOf(sa)
		if !ok {
			return syscall.EAFNOSUPPORT
		}
		m := s.groups[group.Addr().Unmap()]
		if m == nil {
			return syscall.EADDRNOTAVAIL
		}
		delete(s.groups, group.Addr().Unmap())
		return m.Leave()
	})
}
