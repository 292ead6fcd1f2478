package mad

import "encoding/binary"

// REQSize is the length of a REQ message; REQPrivateDataSize the length of
// its private-data area (IB_CM_REQ_PRIVATE_DATA_SIZE).
const (
	REQSize            = DataSize
	REQPrivateDataSize = 92
)

const (
	reqLocalCommID   = 0
	reqVendorID      = 5 // 24 bits, after a reserved byte
	reqServiceID     = 8
	reqLocalCAGUID   = 16
	reqLocalQKey     = 28
	reqLocalQPN      = 32 // 24 bits, then ResponderResources
	reqRespResources = 35
	reqLocalEECN     = 36 // 24 bits, then InitiatorDepth
	reqInitDepth     = 39
	reqRemoteEECN    = 40 // 24 bits, then byte 43
	reqByte43        = 43 // RemoteCMResponseTimeout:5 TransportServiceType:2 E2EFlowControl:1
	reqStartingPSN   = 44 // 24 bits, then byte 47
	reqByte47        = 47 // LocalCMResponseTimeout:5 RetryCount:3
	reqPKey          = 48
	reqByte50        = 50 // PathMTU:4 RDCExists:1 RNRRetryCount:3
	reqByte51        = 51 // MaxCMRetries:4 SRQ:1 ExtendedTransportType:3
	reqPrimaryPath   = 52
	reqAltPath       = 96
	reqSAPSupported  = reqAltPath + pathAckTO // bit 0x04
	reqPrivateData   = 140
)

// REQ is a view of a ConnectRequest message (IBTA 12.6.5, Table 106),
// the message data after the MAD header:
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                     Local Communication ID                    |  0
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|   Reserved    |                  Vendor ID                    |  4
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                     ServiceID (8 bytes)                       |  8
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                    Local CA GUID (8 bytes)                    | 16
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                           Reserved                            | 24
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                          Local Q_Key                          | 28
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                Local QPN                      | Resp. Resour. | 32
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                Local EECN                     | Initiator Dep.| 36
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                Remote EECN                    |RemCMTO  |TT |E| 40
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                Starting PSN                   |LocCMTO  |Retry| 44
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|        Partition Key          |  MTU  |R| RNR |MaxCMR |S| XT  | 48
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|            Primary path (44 bytes, see PathFields)            | 52
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|           Alternate path (44 bytes, see PathFields)           | 96
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                  Private Data (92 bytes)                      |140
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// Vendor ID is the sender's Enhanced Connection Establishment vendor (IBTA
// comment 9434; CM_REQ_VENDOR_ID in the kernel's ibta_vol1_c12.h), whose
// options travel in the MAD header's attribute modifier. RemCMTO and LocCMTO
// are the remote and local CM response timeouts, TT the
// transport service type, E end-to-end flow control, R RDC exists, MaxCMR
// the maximum CM retries, S SRQ and XT the extended transport type. A REQ
// must be at least [REQSize] bytes; methods do not bound-check.
type REQ []byte

// REQFields holds the values of a REQ for [REQ.Encode].
type REQFields struct {
	LocalCommID             uint32
	VendorID                uint32 // 24 bits
	ServiceID               uint64
	LocalCAGUID             uint64
	LocalQKey               uint32
	LocalQPN                uint32 // 24 bits
	ResponderResources      uint8
	LocalEECN               uint32 // 24 bits
	InitiatorDepth          uint8
	RemoteEECN              uint32 // 24 bits
	RemoteCMResponseTimeout uint8  // 5 bits
	TransportType           TransportType
	EndToEndFlowControl     bool
	StartingPSN             uint32 // 24 bits
	LocalCMResponseTimeout  uint8  // 5 bits
	RetryCount              uint8  // 3 bits
	PKey                    uint16
	PathMTU                 MTU
	RDCExists               bool
	RNRRetryCount           uint8 // 3 bits
	MaxCMRetries            uint8 // 4 bits
	SRQ                     bool
	ExtendedTransportType   uint8 // 3 bits
	PrimaryPath             PathFields
	AlternatePath           PathFields
	SAPSupported            bool
	PrivateData             []byte // at most REQPrivateDataSize bytes
}

// LocalCommID returns the "Local Communication ID" field.
func (r REQ) LocalCommID() uint32 { return binary.BigEndian.Uint32(r[reqLocalCommID:]) }

// VendorID returns the 24-bit "Vendor ID" field: the ECE vendor of the
// sender, 0 when it proposes no ECE options.
func (r REQ) VendorID() uint32 { return uint24(r[reqVendorID:]) }

// ServiceID returns the "ServiceID" field, which selects the listener.
func (r REQ) ServiceID() uint64 { return binary.BigEndian.Uint64(r[reqServiceID:]) }

// LocalCAGUID returns the "Local CA GUID" field.
func (r REQ) LocalCAGUID() uint64 { return binary.BigEndian.Uint64(r[reqLocalCAGUID:]) }

// LocalQKey returns the "Local Q_Key" field.
func (r REQ) LocalQKey() uint32 { return binary.BigEndian.Uint32(r[reqLocalQKey:]) }

// LocalQPN returns the 24-bit "Local QPN" field.
func (r REQ) LocalQPN() uint32 { return uint24(r[reqLocalQPN:]) }

// ResponderResources returns the "Responder Resources" field.
func (r REQ) ResponderResources() uint8 { return r[reqRespResources] }

// LocalEECN returns the 24-bit "Local EECN" field.
func (r REQ) LocalEECN() uint32 { return uint24(r[reqLocalEECN:]) }

// InitiatorDepth returns the "Initiator Depth" field.
func (r REQ) InitiatorDepth() uint8 { return r[reqInitDepth] }

// RemoteEECN returns the 24-bit "Remote EECN" field.
func (r REQ) RemoteEECN() uint32 { return uint24(r[reqRemoteEECN:]) }

// RemoteCMResponseTimeout returns the 5-bit "Remote CM Response Timeout":
// how long the sender will wait for the passive side's reply.
func (r REQ) RemoteCMResponseTimeout() uint8 { return r[reqByte43] >> 3 }

// TransportType returns the 2-bit "Transport Service Type".
func (r REQ) TransportType() TransportType { return TransportType(r[reqByte43] >> 1 & 0x03) }

// EndToEndFlowControl returns the "End-to-End Flow Control" bit.
func (r REQ) EndToEndFlowControl() bool { return r[reqByte43]&0x01 != 0 }

// StartingPSN returns the 24-bit "Starting PSN": the first PSN the sender's
// queue pair expects to receive, from which the receiver of this message
// starts sending (ib_cm's reading, which every kernel peer follows).
func (r REQ) StartingPSN() uint32 { return uint24(r[reqStartingPSN:]) }

// LocalCMResponseTimeout returns the 5-bit "Local CM Response Timeout": how
// long the sender may take to answer the passive side's messages.
func (r REQ) LocalCMResponseTimeout() uint8 { return r[reqByte47] >> 3 }

// RetryCount returns the 3-bit "Retry Count".
func (r REQ) RetryCount() uint8 { return r[reqByte47] & 0x07 }

// PKey returns the "Partition Key" field.
func (r REQ) PKey() uint16 { return binary.BigEndian.Uint16(r[reqPKey:]) }

// PathMTU returns the 4-bit "Path Packet Payload MTU".
func (r REQ) PathMTU() MTU { return MTU(r[reqByte50] >> 4) }

// RDCExists returns the "RDC Exists" bit.
func (r REQ) RDCExists() bool { return r[reqByte50]&0x08 != 0 }

// RNRRetryCount returns the 3-bit "RNR Retry Count".
func (r REQ) RNRRetryCount() uint8 { return r[reqByte50] & 0x07 }

// MaxCMRetries returns the 4-bit "Max CM Retries".
func (r REQ) MaxCMRetries() uint8 { return r[reqByte51] >> 4 }

// SRQ returns the "SRQ" bit.
func (r REQ) SRQ() bool { return r[reqByte51]&0x08 != 0 }

// ExtendedTransportType returns the 3-bit "Extended Transport Type".
func (r REQ) ExtendedTransportType() uint8 { return r[reqByte51] & 0x07 }

// PrimaryPath returns the primary path block.
func (r REQ) PrimaryPath() PathFields {
	return reqPath(r[reqPrimaryPath : reqPrimaryPath+PathSize]).fields()
}

// AlternatePath returns the alternate path block (all zero on RoCE, which has
// no automatic path migration).
func (r REQ) AlternatePath() PathFields { return reqPath(r[reqAltPath : reqAltPath+PathSize]).fields() }

// SAPSupported returns the "SAP Supported" bit.
func (r REQ) SAPSupported() bool { return r[reqSAPSupported]&0x04 != 0 }

// PrivateData returns the 92-byte private-data area; it aliases r.
func (r REQ) PrivateData() []byte { return r[reqPrivateData:REQSize:REQSize] }

// Encode writes f into r, zeroing reserved fields and the unused tail of the
// private data. It returns ErrPrivateDataTooLong, writing nothing, when the
// private data does not fit.
func (r REQ) Encode(f *REQFields) error {
	_ = r[REQSize-1]
	if len(f.PrivateData) > REQPrivateDataSize {
		return ErrPrivateDataTooLong
	}
	clear(r[:reqPrivateData])
	binary.BigEndian.PutUint32(r[reqLocalCommID:], f.LocalCommID)
	putUint24(r[reqVendorID:], f.VendorID)
	binary.BigEndian.PutUint64(r[reqServiceID:], f.ServiceID)
	binary.BigEndian.PutUint64(r[reqLocalCAGUID:], f.LocalCAGUID)
	binary.BigEndian.PutUint32(r[reqLocalQKey:], f.LocalQKey)
	putUint24(r[reqLocalQPN:], f.LocalQPN)
	r[reqRespResources] = f.ResponderResources
	putUint24(r[reqLocalEECN:], f.LocalEECN)
	r[reqInitDepth] = f.InitiatorDepth
	putUint24(r[reqRemoteEECN:], f.RemoteEECN)
	r[reqByte43] = f.RemoteCMResponseTimeout<<3 | byte(f.TransportType&0x03)<<1 | bit(f.EndToEndFlowControl, 0x01)
	putUint24(r[reqStartingPSN:], f.StartingPSN)
	r[reqByte47] = f.LocalCMResponseTimeout<<3 | f.RetryCount&0x07
	binary.BigEndian.PutUint16(r[reqPKey:], f.PKey)
	r[reqByte50] = byte(f.PathMTU)<<4 | bit(f.RDCExists, 0x08) | f.RNRRetryCount&0x07
	r[reqByte51] = f.MaxCMRetries<<4 | bit(f.SRQ, 0x08) | f.ExtendedTransportType&0x07
	reqPath(r[reqPrimaryPath : reqPrimaryPath+PathSize]).encode(&f.PrimaryPath)
	reqPath(r[reqAltPath : reqAltPath+PathSize]).encode(&f.AlternatePath)
	r[reqSAPSupported] |= bit(f.SAPSupported, 0x04)
	return putArea(r[reqPrivateData:REQSize], f.PrivateData)
}

// Fields returns the decoded values of r. PrivateData aliases r.
func (r REQ) Fields() REQFields {
	return REQFields{
		LocalCommID:             r.LocalCommID(),
		VendorID:                r.VendorID(),
		ServiceID:               r.ServiceID(),
		LocalCAGUID:             r.LocalCAGUID(),
		LocalQKey:               r.LocalQKey(),
		LocalQPN:                r.LocalQPN(),
		ResponderResources:      r.ResponderResources(),
		LocalEECN:               r.LocalEECN(),
		InitiatorDepth:          r.InitiatorDepth(),
		RemoteEECN:              r.RemoteEECN(),
		RemoteCMResponseTimeout: r.RemoteCMResponseTimeout(),
		TransportType:           r.TransportType(),
		EndToEndFlowControl:     r.EndToEndFlowControl(),
		StartingPSN:             r.StartingPSN(),
		LocalCMResponseTimeout:  r.LocalCMResponseTimeout(),
		RetryCount:              r.RetryCount(),
		PKey:                    r.PKey(),
		PathMTU:                 r.PathMTU(),
		RDCExists:               r.RDCExists(),
		RNRRetryCount:           r.RNRRetryCount(),
		MaxCMRetries:            r.MaxCMRetries(),
		SRQ:                     r.SRQ(),
		ExtendedTransportType:   r.ExtendedTransportType(),
		PrimaryPath:             r.PrimaryPath(),
		AlternatePath:           r.AlternatePath(),
		SAPSupported:            r.SAPSupported(),
		PrivateData:             r.PrivateData(),
	}
}
