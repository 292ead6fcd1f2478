package rdmacm

import (
	"fmt"
	"net/netip"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm"
)

// Config configures a device's agent. The zero value is RDMA-CM's behaviour on RoCE.
type Config struct {
	// CM configures the protocol: timeouts, retries, the connection limit. Zero fields take the cm
	// package's defaults; a zero CAGUID becomes the device's node GUID. Tests shorten
	// CMResponseTimeout and PacketLifeTime so that a lost MAD costs milliseconds, not seconds.
	CM cm.Config
}

// Options are one connection's resources and negotiated values (struct rdma_conn_param plus the
// QP creation attributes rdma_create_qp takes). The zero value is rping's: one outstanding RDMA
// READ each way, seven retries, RNR retries forever.
type Options struct {
	// PD is the protection domain of the connection's QP; nil allocates one that Close frees.
	// Memory the peer reads or writes must be registered on this PD (Conn.PD).
	PD *gorxe.PD
	// Cap sizes the QP's queues; zero fields take 16 work requests and 1 SGE.
	Cap gorxe.QPCap
	// CQE sizes each of the send and receive CQs; zero makes each as deep as the queue that
	// completes into it (Cap.MaxSendWR, Cap.MaxRecvWR), which is all it needs never to overrun
	// (gorxe.Device.CreateCQ).
	CQE int
	// ResponderResources is how many RDMA READs and atomics the peer may have outstanding at us;
	// InitiatorDepth how many we may have outstanding at it. Zero means 1 (rping's). Set NoRDMARead
	// to send 0.
	ResponderResources uint8
	InitiatorDepth     uint8
	NoRDMARead         bool
	// RetryCount (0..7, default 7) is the transport retry count; RNRRetryCount (default 7, forever)
	// is the RNR retry count the peer's QP uses. Set the Zero flags to send 0.
	RetryCount        uint8
	RNRRetryCount     uint8
	ZeroRetryCount    bool
	ZeroRNRRetryCount bool
	// MTU caps the path MTU (zero: the port's active MTU).
	MTU gorxe.MTU
	// PrivateData goes in the REQ after the CMA header (at most 56 bytes) or in the REP (at most
	// 196 bytes).
	PrivateData []byte
	// Recv work requests are posted to the QP before it can receive (in INIT), so the first
	// message of the peer finds them, as rping posts its receive before connecting. Their memory
	// must be registered on PD.
	Recv []gorxe.RecvWR
	// Source is the active side's local address and port (rdma_resolve_addr's src_addr). A zero
	// address takes the device's first address of the destination's family; port 0 picks an
	// ephemeral one.
	Source netip.AddrPort

	// SendCQ and RecvCQ, when both set, are the completion queues of the QP instead of two the
	// connection creates (rdma_create_qp with the caller's CQs: perftest shares one pair among all
	// its QPs). The caller keeps them: Close leaves them alone, and they must outlive the
	// connection. CQE is then ignored.
	SendCQ, RecvCQ *gorxe.CQ
	// TrafficClass is the path's IPv4 TOS or IPv6 traffic class (rdma_set_option
	// RDMA_OPTION_ID_TOS), for Dial: it travels in the REQ's path, and both QPs use it. A passive
	// side takes the REQ's and ignores its own.
	TrafficClass uint8
	// AckTimeout, when nonzero, replaces the negotiated local ACK timeout of our QP with
	// 4.096 µs × 2^AckTimeout (rdma_set_option RDMA_OPTION_ID_ACK_TIMEOUT). It is local: nothing
	// on the wire changes.
	AckTimeout uint8
	// MinRNRTimer, when nonzero, replaces the RNR NAK timer our QP's responder sends (the CM
	// leaves it 0, 655 ms), as a program that sets IBV_QP_MIN_RNR_TIMER on its QP after
	// rdma_accept does.
	MinRNRTimer uint8
	// QP, when set, is the connection's queue pair instead of one it creates (rdma_create_qp on
	// an rdma_cm_id: the program created the QP, its PD and CQs through the verbs API, and posts
	// receives to it before connecting). It must be an RC QP in RESET or INIT, or for DialUD and
	// UDRequest.Accept a UD QP (left in RTS as found); the connection moves an RC QP through
	// INIT, RTR and RTS, and Close moves it to the error state but leaves it to the caller. PD,
	// Cap, CQE, SendCQ, RecvCQ and Recv are then ignored.
	QP *gorxe.QP
	// QPN, without QP, is the number of a QP the caller moves itself (rdma_connect and
	// rdma_accept with conn_param's qp_num and no QP on the id): the CM only negotiates, the
	// caller reads Conn.Attrs (or Request.Attrs) for its RTR and RTS, Dial returns when the REP
	// arrived, and Conn.SendRTU (rdma_establish) completes the active side's handshake.
	QPN uint32
	// RTSAtAccept moves the passive side's QP to RTS before the REP leaves, as librdmacm's
	// rdma_accept does, so that its program may post sends as soon as rdma_accept returns. By
	// default the QP waits in RTR until the connection is established, as IBTA's CM has it.
	RTSAtAccept bool
	// LeaveQPOnDREQ leaves the QP as it is when the peer's DREQ arrives, as librdmacm does (its
	// RDMA_CM_EVENT_DISCONNECTED changes no QP): work in flight completes and posted receives stay
	// until the program disconnects (Disconnect, SendDREQ) or closes, which move the QP to the
	// error state. By default a DREQ moves it there at once, flushing what was posted.
	LeaveQPOnDREQ bool
	// ECE is our Enhanced Connection Establishment (rdma_set_local_ece): Dial sends it in the REQ,
	// Accept in the REP, and the peer reads it with Request.RemoteECE or Conn.RemoteECE. The CM
	// carries it and interprets nothing; the vendor ID must fit 24 bits (else the call fails with
	// cm.ErrInvalidParam). librdmacm's rdma_accept answers with the REQ's vendor ID and its own
	// options: a Go server that does the same sets VendorID from the Request's RemoteECE. UD's
	// service ID resolution carries no ECE here.
	ECE cm.ECE
	// CheckECEVendor makes Dial refuse a REP whose ECE vendor ID is neither 0 (no ECE) nor
	// ECE.VendorID, as librdmacm's rdma_connect does for an id with a QP, whose ECE came from the
	// QP's vendor: the REP is rejected (REJ, consumer defined) and Dial fails with an error
	// matching ErrECEVendor. A caller that moves its QP itself (QPN) reads the REP's ECE instead
	// and decides; the check does not apply to it.
	CheckECEVendor bool
	// Backlog is rdma_listen's backlog, for Listen and ListenUD: how many requests may wait for
	// Accept. Beyond it a REQ is dropped unanswered, as the kernel drops it, so that the peer's
	// retransmission may find room; a SIDR_REQ is refused. Zero means 16.
	Backlog int
}

// ownCQs reports whether the connection creates its CQs, and checks the caller gave both or
// neither.
func (o *Options) ownCQs() (bool, error) {
	if (o.SendCQ == nil) != (o.RecvCQ == nil) {
		return false, fmt.Errorf("%w: SendCQ and RecvCQ must be given together", ErrOptions)
	}
	return o.SendCQ == nil, nil
}

// Defaults of a connection.
const (
	defaultWR      = 16
	defaultDepth   = 1
	defaultRetries = 7
)

// responder returns the responder resources to send.
func (o *Options) responder() uint8 {
	switch {
	case o.NoRDMARead:
		return 0
	case o.ResponderResources == 0:
		return defaultDepth
	}
	return o.ResponderResources
}

// initiator returns the initiator depth to send.
func (o *Options) initiator() uint8 {
	switch {
	case o.NoRDMARead:
		return 0
	case o.InitiatorDepth == 0:
		return defaultDepth
	}
	return o.InitiatorDepth
}

func (o *Options) retry() uint8 {
	if o.ZeroRetryCount {
		return 0
	}
	if o.RetryCount == 0 {
		return defaultRetries
	}
	return min(o.RetryCount, 7)
}

func (o *Options) rnrRetry() uint8 {
	if o.ZeroRNRRetryCount {
		return 0
	}
	if o.RNRRetryCount == 0 {
		return defaultRetries
	}
	return min(o.RNRRetryCount, 7)
}

// caps returns the QP capabilities with defaults filled in.
func (o *Options) caps() gorxe.QPCap {
	c := o.Cap
	if c.MaxSendWR == 0 {
		c.MaxSendWR = defaultWR
	}
	if c.MaxRecvWR == 0 {
		c.MaxRecvWR = defaultWR
	}
	if c.MaxSendSGE == 0 {
		c.MaxSendSGE = 1
	}
	if c.MaxRecvSGE == 0 {
		c.MaxRecvSGE = 1
	}
	return c
}
