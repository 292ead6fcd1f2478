package cm

import "github.com/gorxe/gorxe/cm/mad"

// QPAttrs are the queue pair attributes the CM negotiates for one
// connection, as plain values for the consumer to apply with its verbs
// (mirroring ib_cm_init_qp_attr):
//
//   - RESET→INIT: PKey (index of packet.DefaultPKey), access flags of the consumer's
//     choosing.
//   - INIT→RTR: the address (RemoteGID, LocalGID, FlowLabel, TrafficClass,
//     HopLimit, SL), PathMTU, RemoteQPN, RQPSN, MaxDestRdAtomic and
//     MinRNRTimer (RC).
//   - RTR→RTS: SQPSN, Timeout, RetryCount, RNRRetry and MaxRdAtomic (RC).
type QPAttrs struct {
	Transport mad.TransportType
	LocalQPN  uint32
	RemoteQPN uint32
	// RQPSN is the first PSN we receive: we choose it and send it as the
	// Starting PSN of our REQ or REP. SQPSN is the first PSN we send: the
	// Starting PSN of the peer's message. ib_cm reads the field this way
	// (its active side takes its receive PSN from its own REQ, its passive
	// side its send PSN from the REQ), so a peer that sent with its own
	// Starting PSN would be NAKed with a PSN sequence error by every kernel.
	SQPSN uint32
	RQPSN uint32
	// PathMTU is the IB MTU enum the REQ carried.
	PathMTU mad.MTU
	PKey    uint16
	// MaxDestRdAtomic is how many RDMA READ/atomic requests the peer may
	// have outstanding at us ("responder resources"); MaxRdAtomic how many
	// we may have outstanding at it ("initiator depth").
	MaxDestRdAtomic uint8
	MaxRdAtomic     uint8
	// RetryCount and RNRRetry are the 3-bit retry counts (7 RNR retries
	// means forever).
	RetryCount uint8
	RNRRetry   uint8
	// MinRNRTimer is the RNR NAK timer code; the CM always sets 0, as
	// ib_cm does.
	MinRNRTimer uint8
	// Timeout is the local ACK timeout exponent (4.096 µs × 2^n).
	Timeout uint8
	SRQ     bool
	// The address vector of the primary path.
	LocalGID     [16]byte
	RemoteGID    [16]byte
	FlowLabel    uint32
	TrafficClass uint8
	HopLimit     uint8
	SL           uint8
}
