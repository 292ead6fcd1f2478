package mad

import "strconv"

// RejectReason is the "Reason" of a REJ (IBTA Table 109; enum
// ib_cm_rej_reason). Names follow the kernel's IB_CM_REJ_* constants.
type RejectReason uint16

// REJ reasons.
const (
	RejNoQP                      RejectReason = 1
	RejNoEEC                     RejectReason = 2
	RejNoResources               RejectReason = 3
	RejTimeout                   RejectReason = 4
	RejUnsupported               RejectReason = 5
	RejInvalidCommID             RejectReason = 6
	RejInvalidCommInstance       RejectReason = 7
	RejInvalidServiceID          RejectReason = 8
	RejInvalidTransportType      RejectReason = 9
	RejStaleConn                 RejectReason = 10
	RejRDCNotExist               RejectReason = 11
	RejInvalidGID                RejectReason = 12
	RejInvalidLID                RejectReason = 13
	RejInvalidSL                 RejectReason = 14
	RejInvalidTrafficClass       RejectReason = 15
	RejInvalidHopLimit           RejectReason = 16
	RejInvalidPacketRate         RejectReason = 17
	RejInvalidAltGID             RejectReason = 18
	RejInvalidAltLID             RejectReason = 19
	RejInvalidAltSL              RejectReason = 20
	RejInvalidAltTrafficClass    RejectReason = 21
	RejInvalidAltHopLimit        RejectReason = 22
	RejInvalidAltPacketRate      RejectReason = 23
	RejPortCMRedirect            RejectReason = 24
	RejPortRedirect              RejectReason = 25
	RejInvalidMTU                RejectReason = 26
	RejInsufficientRespResources RejectReason = 27
	RejConsumerDefined           RejectReason = 28
	RejInvalidRNRRetry           RejectReason = 29
	RejDuplicateLocalCommID      RejectReason = 30
	RejInvalidClassVersion       RejectReason = 31
	RejInvalidFlowLabel          RejectReason = 32
	RejInvalidAltFlowLabel       RejectReason = 33
	RejVendorOptionNotSupported  RejectReason = 35
)

var rejectReasonNames = map[RejectReason]string{
	RejNoQP:                      "no QP",
	RejNoEEC:                     "no EEC",
	RejNoResources:               "no resources",
	RejTimeout:                   "timeout",
	RejUnsupported:               "unsupported request",
	RejInvalidCommID:             "invalid communication ID",
	RejInvalidCommInstance:       "invalid communication instance",
	RejInvalidServiceID:          "invalid service ID",
	RejInvalidTransportType:      "invalid transport service type",
	RejStaleConn:                 "stale connection",
	RejRDCNotExist:               "RDC does not exist",
	RejInvalidGID:                "invalid primary GID",
	RejInvalidLID:                "invalid primary LID",
	RejInvalidSL:                 "invalid primary SL",
	RejInvalidTrafficClass:       "invalid primary traffic class",
	RejInvalidHopLimit:           "invalid primary hop limit",
	RejInvalidPacketRate:         "invalid primary packet rate",
	RejInvalidAltGID:             "invalid alternate GID",
	RejInvalidAltLID:             "invalid alternate LID",
	RejInvalidAltSL:              "invalid alternate SL",
	RejInvalidAltTrafficClass:    "invalid alternate traffic class",
	RejInvalidAltHopLimit:        "invalid alternate hop limit",
	RejInvalidAltPacketRate:      "invalid alternate packet rate",
	RejPortCMRedirect:            "port and CM redirection",
	RejPortRedirect:              "port redirection",
	RejInvalidMTU:                "invalid path MTU",
	RejInsufficientRespResources: "insufficient responder resources",
	RejConsumerDefined:           "consumer defined",
	RejInvalidRNRRetry:           "invalid RNR retry count",
	RejDuplicateLocalCommID:      "duplicate local communication ID",
	RejInvalidClassVersion:       "invalid class version",
	RejInvalidFlowLabel:          "invalid primary flow label",
	RejInvalidAltFlowLabel:       "invalid alternate flow label",
	RejVendorOptionNotSupported:  "vendor option not supported",
}

// String returns the reason as IBTA Table 109 words it.
func (r RejectReason) String() string {
	if s, ok := rejectReasonNames[r]; ok {
		return s
	}
	return "reject reason " + strconv.Itoa(int(r))
}
