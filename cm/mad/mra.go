package mad

// MRASize is the length of an MRA message; MRAPrivateDataSize the length of
// its private-data area (IB_CM_MRA_PRIVATE_DATA_SIZE).
const (
	MRASize            = DataSize
	MRAPrivateDataSize = 222
	mraMsgMRAed        = 8 // upper 2 bits
	mraServiceTimeout  = 9 // upper 5 bits
	mraPrivateData     = 10
)

// MRA is a view of a MessageReceiptAcknowledgement (IBTA 12.6.6, Table 107):
// "your message arrived; my reply will take up to Service Timeout", which
// stops the receiver's retransmissions of the acknowledged message.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                     Local Communication ID                    |  0
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                    Remote Communication ID                    |  4
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|MsM|   Rsvd    |SvcTimeout | Rsv |  Private Data (222 bytes)     |  8
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// MsM is "Message MRAed" ([MsgType]). An MRA must be at least [MRASize]
// bytes; methods do not bound-check.
type MRA []byte

// MRAFields holds the values of an MRA for [MRA.Encode].
type MRAFields struct {
	LocalCommID    uint32
	RemoteCommID   uint32
	MsgMRAed       MsgType // 2 bits
	ServiceTimeout uint8   // 5 bits: 4.096 µs × 2^n
	PrivateData    []byte  // at most MRAPrivateDataSize bytes
}

// LocalCommID returns the "Local Communication ID" field.
func (r MRA) LocalCommID() uint32 { return localCommID(r) }

// RemoteCommID returns the "Remote Communication ID" field.
func (r MRA) RemoteCommID() uint32 { return remoteCommID(r) }

// MsgMRAed returns the 2-bit "Message MRAed" field.
func (r MRA) MsgMRAed() MsgType { return MsgType(r[mraMsgMRAed] >> 6) }

// ServiceTimeout returns the 5-bit "Service Timeout" field.
func (r MRA) ServiceTimeout() uint8 { return r[mraServiceTimeout] >> 3 }

// PrivateData returns the 222-byte private-data area; it aliases r.
func (r MRA) PrivateData() []byte { return r[mraPrivateData:MRASize:MRASize] }

// Encode writes f into r. It returns ErrPrivateDataTooLong, writing
// nothing, when the private data does not fit.
func (r MRA) Encode(f *MRAFields) error {
	_ = r[MRASize-1]
	if len(f.PrivateData) > MRAPrivateDataSize {
		return ErrPrivateDataTooLong
	}
	putCommIDs(r, f.LocalCommID, f.RemoteCommID)
	r[mraMsgMRAed] = byte(f.MsgMRAed) << 6
	r[mraServiceTimeout] = f.ServiceTimeout << 3
	return putArea(r[mraPrivateData:MRASize], f.PrivateData)
}

// Fields returns the decoded values of r. PrivateData aliases r.
func (r MRA) Fields() MRAFields {
	return MRAFields{
		LocalCommID:    r.LocalCommID(),
		RemoteCommID:   r.RemoteCommID(),
		MsgMRAed:       r.MsgMRAed(),
		ServiceTimeout: r.ServiceTimeout(),
		PrivateData:    r.PrivateData(),
	}
}
