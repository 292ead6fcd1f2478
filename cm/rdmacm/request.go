package rdmacm

import (
	"context"
	"net/netip"
	"time"

	"github.com/gorxe/gorxe/cm"
	"github.com/gorxe/gorxe/cm/mad"
)

// Request is a connection request taken from a listener's backlog but not yet answered: the
// RDMA_CM_EVENT_CONNECT_REQUEST a librdmacm program sees, on whose new id it creates a QP before
// rdma_accept or rdma_reject. Accept and Reject answer it; exactly one of them should be called.
type Request struct {
	l *Listener
	r *request
}

// Next waits for the next connection request (the first half of Accept, for callers that
// decide per request and bring their own QP, Options.QP).
func (l *Listener) Next(ctx context.Context) (*Request, error) {
	r, err := l.core.next(ctx, "next")
	if err != nil {
		return nil, err
	}
	return &Request{l: l, r: r}, nil
}

// PrivateData returns the REQ's private data after the CMA header, zero-padded.
func (q *Request) PrivateData() []byte { return q.r.user }

// RemoteAddr returns the requesting peer's address and source port.
func (q *Request) RemoteAddr() netip.AddrPort { return q.r.peer }

// LocalAddr returns the address and port the request was sent to.
func (q *Request) LocalAddr() netip.AddrPort { return q.r.local }

// ResponderResources and InitiatorDepth return what the REQ offered: the most RDMA READs the
// peer lets us have outstanding at it, and the most it will have outstanding at us.
func (q *Request) ResponderResources() uint8 { return q.r.attrs.MaxDestRdAtomic }

// InitiatorDepth returns the REQ's initiator depth; see ResponderResources.
func (q *Request) InitiatorDepth() uint8 { return q.r.attrs.MaxRdAtomic }

// RemoteECE returns the REQ's Enhanced Connection Establishment: the peer's vendor ID and
// options (rdma_get_remote_ece on the request's id), zero from a peer that sent none.
func (q *Request) RemoteECE() cm.ECE { return q.r.ece }

// Attrs returns the QP attributes the REQ asks for, from the passive side's point of view: what
// a caller that moves its QP itself (Options.QPN) applies for RTR and RTS before SendREP
// (rdma_init_qp_attr on the request's id).
func (q *Request) Attrs() cm.QPAttrs { return q.r.attrs }

// Accept answers the request with a REP (rdma_accept) and returns the connection once the peer's
// RTU established it. opts nil takes the listener's options.
func (q *Request) Accept(ctx context.Context, opts *Options) (*Conn, error) {
	if opts == nil {
		opts = &q.l.opts
	}
	return q.l.accept(ctx, q.r, opts)
}

// SendREP is the first half of Accept: it answers with the REP and returns the connection once
// the REP has left, not yet established; Conn.WaitEstablished is the second half. rdma_accept
// returns there, and with Options.RTSAtAccept the program may post sends at once.
func (q *Request) SendREP(ctx context.Context, opts *Options) (*Conn, error) {
	if opts == nil {
		opts = &q.l.opts
	}
	return q.l.sendREP(ctx, q.r, opts)
}

// Reject refuses the request with a REJ, reason consumer-defined (28), carrying privateData
// (rdma_reject); the peer sees RDMA_CM_EVENT_REJECTED with status 28.
func (q *Request) Reject(privateData []byte) error {
	return q.reject(mad.RejConsumerDefined, privateData)
}

// RejectECE refuses the request because its ECE options are not acceptable (rdma_reject_ece): a
// REJ with reason 35, vendor option not supported, carrying privateData; the peer sees
// RDMA_CM_EVENT_REJECTED with status 35, and its Dial fails with that reason.
func (q *Request) RejectECE(privateData []byte) error {
	return q.reject(mad.RejVendorOptionNotSupported, privateData)
}

func (q *Request) reject(reason mad.RejectReason, privateData []byte) error {
	a := q.l.core.a
	return a.do(context.Background(), func(now time.Time, out *cm.Output) error {
		return a.mgr.Reject(now, q.r.id, reason, nil, privateData, out)
	})
}

// UDRequest is a service ID resolution request (SIDR_REQ) taken from a UD listener's backlog but
// not yet answered: the CONNECT_REQUEST of an RDMA_PS_UDP id. Accept or Reject answers it.
type UDRequest struct {
	l *UDListener
	r *udRequest
}

// Next waits for the next request (the first half of Accept, for callers that bring their own
// QP, Options.QP).
func (l *UDListener) Next(ctx context.Context) (*UDRequest, error) {
	r, err := l.core.next(ctx, "next")
	if err != nil {
		return nil, err
	}
	return &UDRequest{l: l, r: r}, nil
}

// PrivateData returns the SIDR_REQ's private data after the CMA header, zero-padded.
func (q *UDRequest) PrivateData() []byte { return q.r.user }

// RemoteAddr returns the requesting peer's address and source port.
func (q *UDRequest) RemoteAddr() netip.AddrPort { return q.r.peer }

// LocalAddr returns the address and port the request was sent to.
func (q *UDRequest) LocalAddr() netip.AddrPort { return q.r.local }

// Accept answers with a SIDR_REP naming the endpoint's QP and RDMA-CM's Q_Key (rdma_accept on a
// UD id). opts nil takes the listener's options.
func (q *UDRequest) Accept(ctx context.Context, opts *UDOptions) (*UDConn, error) {
	if opts == nil {
		opts = &q.l.opts
	}
	return q.l.accept(ctx, q.r, opts)
}

// Reject refuses the request with a SIDR_REP of status 2 (rejected), carrying privateData
// (rdma_reject on a UD id).
func (q *UDRequest) Reject(privateData []byte) error {
	a := q.l.core.a
	return a.do(context.Background(), func(now time.Time, out *cm.Output) error {
		return a.mgr.ReplySIDR(now, q.r.id, cm.SIDRReply{Status: mad.SIDRReject, PrivateData: privateData}, out)
	})
}
