package mad

import "encoding/binary"

// REPSize is the length of a REP message; REPPrivateDataSize the length of
// its private-data area (IB_CM_REP_PRIVATE_DATA_SIZE).
const (
	REPSize            = DataSize
	REPPrivateDataSize = 196
)

const (
	repLocalCommID   = 0
	repRemoteCommID  = 4
	repLocalQKey     = 8
	repLocalQPN      = 12 // 24 bits, then VendorID bits 23:16
	repLocalEECN     = 16 // 24 bits, then VendorID bits 15:8
	repStartingPSN   = 20 // 24 bits, then VendorID bits 7:0
	repVendorIDHigh  = 15
	repVendorIDMid   = 19
	repVendorIDLow   = 23
	repRespResources = 24
	repInitDepth     = 25
	repByte26        = 26 // TargetAckDelay:5 FailoverAccepted:2 E2EFlowControl:1
	repByte27        = 27 // RNRRetryCount:3 SRQ:1
	repLocalCAGUID   = 28
	repPrivateData   = 36
)

// REP is a view of a ConnectReply message (IBTA 12.6.8, Table 110):
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                     Local Communication ID                    |  0
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                    Remote Communication ID                    |  4
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                          Local Q_Key                          |  8
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                Local QPN                      | Vendor ID hi  | 12
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                Local EE Context Number        | Vendor ID mid | 16
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                Starting PSN                   | Vendor ID lo  | 20
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	| Resp. Resour. | Initiator Dep.|TgtAckDly|FO |E| RNR |S|  Rsvd   | 24
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                    Local CA GUID (8 bytes)                    | 28
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                  Private Data (196 bytes)                     | 36
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// The 24-bit Vendor ID, the replier's Enhanced Connection Establishment
// vendor (IBTA comment 9434), is split over the low bytes of three words,
// most significant first (CM_REP_VENDOR_ID_H, _M, _L in the kernel's
// ibta_vol1_c12.h); its options travel in the MAD header's attribute
// modifier. TgtAckDly is the target ACK delay, FO failover accepted, E
// end-to-end flow control, RNR the RNR retry count and S SRQ. A REP must be
// at least [REPSize] bytes; methods do not bound-check.
type REP []byte

// REPFields holds the values of a REP for [REP.Encode].
type REPFields struct {
	LocalCommID         uint32
	RemoteCommID        uint32
	LocalQKey           uint32
	LocalQPN            uint32 // 24 bits
	LocalEECN           uint32 // 24 bits
	StartingPSN         uint32 // 24 bits
	VendorID            uint32 // 24 bits
	ResponderResources  uint8
	InitiatorDepth      uint8
	TargetAckDelay      uint8 // 5 bits
	FailoverAccepted    uint8 // 2 bits
	EndToEndFlowControl bool
	RNRRetryCount       uint8 // 3 bits
	SRQ                 bool
	LocalCAGUID         uint64
	PrivateData         []byte // at most REPPrivateDataSize bytes
}

// LocalCommID returns the "Local Communication ID" field.
func (r REP) LocalCommID() uint32 { return binary.BigEndian.Uint32(r[repLocalCommID:]) }

// RemoteCommID returns the "Remote Communication ID" field: the REQ's local ID.
func (r REP) RemoteCommID() uint32 { return binary.BigEndian.Uint32(r[repRemoteCommID:]) }

// LocalQKey returns the "Local Q_Key" field.
func (r REP) LocalQKey() uint32 { return binary.BigEndian.Uint32(r[repLocalQKey:]) }

// LocalQPN returns the 24-bit "Local QPN" field.
func (r REP) LocalQPN() uint32 { return uint24(r[repLocalQPN:]) }

// LocalEECN returns the 24-bit "Local EE Context Number" field.
func (r REP) LocalEECN() uint32 { return uint24(r[repLocalEECN:]) }

// StartingPSN returns the 24-bit "Starting PSN": the first PSN the sender's
// queue pair expects to receive, from which the receiver of this message
// starts sending (ib_cm's reading, which every kernel peer follows).
func (r REP) StartingPSN() uint32 { return uint24(r[repStartingPSN:]) }

// VendorID returns the 24-bit "Vendor ID" from its three bytes: the ECE
// vendor of the replier, 0 when it answers with no ECE options.
func (r REP) VendorID() uint32 {
	return uint32(r[repVendorIDHigh])<<16 | uint32(r[repVendorIDMid])<<8 | uint32(r[repVendorIDLow])
}

// ResponderResources returns the "Responder Resources" field.
func (r REP) ResponderResources() uint8 { return r[repRespResources] }

// InitiatorDepth returns the "Initiator Depth" field.
func (r REP) InitiatorDepth() uint8 { return r[repInitDepth] }

// TargetAckDelay returns the 5-bit "Target ACK Delay".
func (r REP) TargetAckDelay() uint8 { return r[repByte26] >> 3 }

// FailoverAccepted returns the 2-bit "Failover Accepted" field.
func (r REP) FailoverAccepted() uint8 { return r[repByte26] >> 1 & 0x03 }

// EndToEndFlowControl returns the "End-to-End Flow Control" bit.
func (r REP) EndToEndFlowControl() bool { return r[repByte26]&0x01 != 0 }

// RNRRetryCount returns the 3-bit "RNR Retry Count".
func (r REP) RNRRetryCount() uint8 { return r[repByte27] >> 5 }

// SRQ returns the "SRQ" bit.
func (r REP) SRQ() bool { return r[repByte27]&0x10 != 0 }

// LocalCAGUID returns the "Local CA GUID" field.
func (r REP) LocalCAGUID() uint64 { return binary.BigEndian.Uint64(r[repLocalCAGUID:]) }

// PrivateData returns the 196-byte private-data area; it aliases r.
func (r REP) PrivateData() []byte { return r[repPrivateData:REPSize:REPSize] }

// Encode writes f into r, zeroing reserved fields and the unused tail of the
// private data. It returns ErrPrivateDataTooLong, writing nothing, when the
// private data does not fit.
func (r REP) Encode(f *REPFields) error {
	_ = r[REPSize-1]
	if len(f.PrivateData) > REPPrivateDataSize {
		return ErrPrivateDataTooLong
	}
	clear(r[:repPrivateData])
	binary.BigEndian.PutUint32(r[repLocalCommID:], f.LocalCommID)
	binary.BigEndian.PutUint32(r[repRemoteCommID:], f.RemoteCommID)
	binary.BigEndian.PutUint32(r[repLocalQKey:], f.LocalQKey)
	putUint24(r[repLocalQPN:], f.LocalQPN)
	putUint24(r[repLocalEECN:], f.LocalEECN)
	putUint24(r[repStartingPSN:], f.StartingPSN)
	r[repVendorIDHigh], r[repVendorIDMid], r[repVendorIDLow] = byte(f.VendorID>>16), byte(f.VendorID>>8), byte(f.VendorID)
	r[repRespResources] = f.ResponderResources
	r[repInitDepth] = f.InitiatorDepth
	r[repByte26] = f.TargetAckDelay<<3 | (f.FailoverAccepted&0x03)<<1 | bit(f.EndToEndFlowControl, 0x01)
	r[repByte27] = f.RNRRetryCount<<5 | bit(f.SRQ, 0x10)
	binary.BigEndian.PutUint64(r[repLocalCAGUID:], f.LocalCAGUID)
	return putArea(r[repPrivateData:REPSize], f.PrivateData)
}

// Fields returns the decoded values of r. PrivateData aliases r.
func (r REP) Fields() REPFields {
	return REPFields{
		LocalCommID:         r.LocalCommID(),
		RemoteCommID:        r.RemoteCommID(),
		LocalQKey:           r.LocalQKey(),
		LocalQPN:            r.LocalQPN(),
		LocalEECN:           r.LocalEECN(),
		StartingPSN:         r.StartingPSN(),
		VendorID:            r.VendorID(),
		ResponderResources:  r.ResponderResources(),
		InitiatorDepth:      r.InitiatorDepth(),
		TargetAckDelay:      r.TargetAckDelay(),
		FailoverAccepted:    r.FailoverAccepted(),
		EndToEndFlowControl: r.EndToEndFlowControl(),
		RNRRetryCount:       r.RNRRetryCount(),
		SRQ:                 r.SRQ(),
		LocalCAGUID:         r.LocalCAGUID(),
		PrivateData:         r.PrivateData(),
	}
}
