package mad

import "encoding/binary"

// REJ sizes (IB_CM_REJ_PRIVATE_DATA_SIZE, IB_CM_REJ_ARI_LENGTH).
const (
	REJSize            = DataSize
	REJPrivateDataSize = 148
	REJARISize         = 72
	rejMsgRejected     = 8 // upper 2 bits
	rejInfoLength      = 9 // upper 7 bits
	rejReason          = 10
	rejARI             = 12
	rejPrivateData     = 84
)

// REJ is a view of a ConnectReject message (IBTA 12.6.7, Table 108):
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                     Local Communication ID                    |  0
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                    Remote Communication ID                    |  4
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|MsR|   Rsvd    | RejInfoLen  |R|            Reason             |  8
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|          Additional Rejection Information (72 bytes)          | 12
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                  Private Data (148 bytes)                     | 84
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// MsR is "Message Rejected" ([MsgType]); RejInfoLen the number of
// meaningful ARI bytes. A REJ must be at least [REJSize] bytes; methods do
// not bound-check.
type REJ []byte

// REJFields holds the values of a REJ for [REJ.Encode].
type REJFields struct {
	LocalCommID  uint32
	RemoteCommID uint32
	MsgRejected  MsgType // 2 bits
	Reason       RejectReason
	ARI          []byte // at most REJARISize bytes; its length is RejectedInfoLength
	PrivateData  []byte // at most REJPrivateDataSize bytes
}

// LocalCommID returns the "Local Communication ID" field (0 when the sender
// has no connection for the message it rejects).
func (r REJ) LocalCommID() uint32 { return localCommID(r) }

// RemoteCommID returns the "Remote Communication ID" field.
func (r REJ) RemoteCommID() uint32 { return remoteCommID(r) }

// MsgRejected returns the 2-bit "Message Rejected" field.
func (r REJ) MsgRejected() MsgType { return MsgType(r[rejMsgRejected] >> 6) }

// RejectedInfoLength returns the 7-bit "Reject Info Length" as sent; it may
// exceed the ARI area in a hostile message (see [REJ.ARI]).
func (r REJ) RejectedInfoLength() uint8 { return r[rejInfoLength] >> 1 }

// Reason returns the "Reason" field.
func (r REJ) Reason() RejectReason { return RejectReason(binary.BigEndian.Uint16(r[rejReason:])) }

// ARI returns the meaningful bytes of the Additional Rejection Information,
// its length clamped to the 72-byte area; it aliases r.
func (r REJ) ARI() []byte {
	n := min(int(r.RejectedInfoLength()), REJARISize)
	return r[rejARI : rejARI+n : rejARI+n]
}

// PrivateData returns the 148-byte private-data area; it aliases r.
func (r REJ) PrivateData() []byte { return r[rejPrivateData:REJSize:REJSize] }

// Encode writes f into r. It returns ErrPrivateDataTooLong, writing
// nothing, when the ARI or the private data does not fit.
func (r REJ) Encode(f *REJFields) error {
	_ = r[REJSize-1]
	if len(f.PrivateData) > REJPrivateDataSize || len(f.ARI) > REJARISize {
		return ErrPrivateDataTooLong
	}
	putCommIDs(r, f.LocalCommID, f.RemoteCommID)
	r[rejMsgRejected] = byte(f.MsgRejected) << 6
	r[rejInfoLength] = byte(len(f.ARI)) << 1
	binary.BigEndian.PutUint16(r[rejReason:], uint16(f.Reason))
	_ = putArea(r[rejARI:rejPrivateData], f.ARI)
	return putArea(r[rejPrivateData:REJSize], f.PrivateData)
}

// Fields returns the decoded values of r. ARI and PrivateData alias r.
func (r REJ) Fields() REJFields {
	return REJFields{
		LocalCommID:  r.LocalCommID(),
		RemoteCommID: r.RemoteCommID(),
		MsgRejected:  r.MsgRejected(),
		Reason:       r.Reason(),
		ARI:          r.ARI(),
		PrivateData:  r.PrivateData(),
	}
}
