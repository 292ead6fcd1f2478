package rdmacm

import (
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
	// CQE sizes each of the send and receive CQs; zero makes it fit the queues.
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
