package mad

// DREQSize is the length of a DREQ message; DREQPrivateDataSize the length
// of its private-data area (IB_CM_DREQ_PRIVATE_DATA_SIZE).
const (
	DREQSize            = DataSize
	DREQPrivateDataSize = 220
	dreqRemoteQPN       = 8 // 24 bits
	dreqPrivateData     = 12
)

// DREQ is a view of a DisconnectRequest message (IBTA 12.6.10, Table 112):
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                     Local Communication ID                    |  0
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                    Remote Communication ID                    |  4
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                Remote QPN/EECN                |   Reserved    |  8
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                  Private Data (220 bytes)                     | 12
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// Remote QPN/EECN is the receiver's QPN, which the receiver checks against
// the connection. A DREQ must be at least [DREQSize] bytes; methods do not
// bound-check.
type DREQ []byte

// DREQFields holds the values of a DREQ for [DREQ.Encode].
type DREQFields struct {
	LocalCommID  uint32
	RemoteCommID uint32
	RemoteQPN    uint32 // 24 bits
	PrivateData  []byte // at most DREQPrivateDataSize bytes
}

// LocalCommID returns the "Local Communication ID" field.
func (r DREQ) LocalCommID() uint32 { return localCommID(r) }

// RemoteCommID returns the "Remote Communication ID" field.
func (r DREQ) RemoteCommID() uint32 { return remoteCommID(r) }

// RemoteQPN returns the 24-bit "Remote QPN/EECN" field.
func (r DREQ) RemoteQPN() uint32 { return uint24(r[dreqRemoteQPN:]) }

// PrivateData returns the 220-byte private-data area; it aliases r.
func (r DREQ) PrivateData() []byte { return r[dreqPrivateData:DREQSize:DREQSize] }

// Encode writes f into r. It returns ErrPrivateDataTooLong, writing
// nothing, when the private data does not fit.
func (r DREQ) Encode(f *DREQFields) error {
	_ = r[DREQSize-1]
	if len(f.PrivateData) > DREQPrivateDataSize {
		return ErrPrivateDataTooLong
	}
	putCommIDs(r, f.LocalCommID, f.RemoteCommID)
	putUint24(r[dreqRemoteQPN:], f.RemoteQPN)
	r[dreqRemoteQPN+3] = 0
	return putArea(r[dreqPrivateData:DREQSize], f.PrivateData)
}

// Fields returns the decoded values of r. PrivateData aliases r.
func (r DREQ) Fields() DREQFields {
	return DREQFields{
		LocalCommID:  r.LocalCommID(),
		RemoteCommID: r.RemoteCommID(),
		RemoteQPN:    r.RemoteQPN(),
		PrivateData:  r.PrivateData(),
	}
}
