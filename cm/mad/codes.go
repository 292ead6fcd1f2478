package mad

import (
	"strconv"
	"time"
)

// MsgType names the message an MRA acknowledges ("MsgMRAed") or a REJ
// rejects ("MsgRejected") (IBTA Tables 107 and 108; CM_MSG_RESPONSE_* in the
// kernel's cm.c).
type MsgType uint8

// Message types of MsgMRAed and MsgRejected.
const (
	MsgTypeREQ   MsgType = 0
	MsgTypeREP   MsgType = 1
	MsgTypeOther MsgType = 2 // LAP for an MRA; "no message" for a REJ
)

func (t MsgType) String() string {
	switch t {
	case MsgTypeREQ:
		return "REQ"
	case MsgTypeREP:
		return "REP"
	case MsgTypeOther:
		return "Other"
	}
	return "MsgType(" + strconv.Itoa(int(t)) + ")"
}

// TransportType is the "Transport Service Type" of a REQ (IBTA Table 106).
type TransportType uint8

// Transport service types. gorxe, like rxe, connects RC and UC only.
const (
	TransportRC TransportType = 0
	TransportUC TransportType = 1
	TransportRD TransportType = 2
)

func (t TransportType) String() string {
	switch t {
	case TransportRC:
		return "RC"
	case TransportUC:
		return "UC"
	case TransportRD:
		return "RD"
	}
	return "TransportType(" + strconv.Itoa(int(t)) + ")"
}

// APRStatus is the "AP Status" of an APR (IBTA Table 117; enum
// ib_cm_apr_status).
type APRStatus uint8

// APR status codes.
const (
	APRSuccess          APRStatus = 0
	APRInvalidCommID    APRStatus = 1
	APRUnsupported      APRStatus = 2
	APRReject           APRStatus = 3
	APRRedirect         APRStatus = 4
	APRIsCurrent        APRStatus = 5
	APRInvalidQPNEECN   APRStatus = 6
	APRInvalidLID       APRStatus = 7
	APRInvalidGID       APRStatus = 8
	APRInvalidFlowLabel APRStatus = 9
	APRInvalidTClass    APRStatus = 10
	APRInvalidHopLimit  APRStatus = 11
	APRInvalidPktRate   APRStatus = 12
	APRInvalidSL        APRStatus = 13
)

// SIDRStatus is the "Status" of a SIDR_REP (IBTA Table 121; enum
// ib_cm_sidr_status).
type SIDRStatus uint8

// SIDR_REP status codes.
const (
	SIDRSuccess            SIDRStatus = 0
	SIDRUnsupported        SIDRStatus = 1 // no listener for the service ID
	SIDRReject             SIDRStatus = 2
	SIDRNoQP               SIDRStatus = 3
	SIDRRedirect           SIDRStatus = 4
	SIDRUnsupportedVersion SIDRStatus = 5
)

func (s SIDRStatus) String() string {
	switch s {
	case SIDRSuccess:
		return "success"
	case SIDRUnsupported:
		return "service ID not supported"
	case SIDRReject:
		return "rejected"
	case SIDRNoQP:
		return "no QP"
	case SIDRRedirect:
		return "redirect"
	case SIDRUnsupportedVersion:
		return "unsupported version"
	}
	return "SIDRStatus(" + strconv.Itoa(int(s)) + ")"
}

// Timeout converts a 5-bit CM time exponent (CM response timeouts, service
// timeouts, packet lifetimes, ACK timeouts) into a duration: IBTA encodes all
// of them as 4.096 µs × 2^n. Values above 31 are taken modulo 32, as the
// 5-bit wire field would hold them.
func Timeout(n uint8) time.Duration {
	return 4096 * time.Nanosecond << (n & 31)
}

// AckTimeout returns the exponent of the sum of two CM time exponents, the
// way the kernel's CM combines the path's round trip (2 × packet lifetime,
// exponent lifetime+1) with the responder's CA ACK delay to get a QP's local
// ACK timeout. A sum of two powers of two is within a factor of two of the
// larger one, so the result is the larger exponent, plus one when the two are
// close enough (at most one apart) for the smaller to matter; it saturates at
// 31, the largest 5-bit value.
func AckTimeout(caAckDelay, packetLifeTime uint8) uint8 {
	a, d := int(packetLifeTime)+1, int(caAckDelay)
	hi, lo := max(a, d), min(a, d)
	if hi-lo <= 1 {
		hi++
	}
	return uint8(min(hi, 31))
}

// MTU is the IB path MTU enumeration carried in a REQ (IBTA Table 106;
// enum ib_mtu).
type MTU uint8

// Path MTUs.
const (
	MTU256  MTU = 1
	MTU512  MTU = 2
	MTU1024 MTU = 3
	MTU2048 MTU = 4
	MTU4096 MTU = 5
)

// Valid reports whether m is one of the five IB MTUs.
func (m MTU) Valid() bool { return m >= MTU256 && m <= MTU4096 }

// Bytes returns the MTU in bytes, or 0 for an invalid value.
func (m MTU) Bytes() int {
	if !m.Valid() {
		return 0
	}
	return 128 << m
}
