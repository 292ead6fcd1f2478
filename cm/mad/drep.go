package mad

// DREPSize is the length of a DREP message; DREPPrivateDataSize the length
// of its private-data area (IB_CM_DREP_PRIVATE_DATA_SIZE).
const (
	DREPSize            = DataSize
	DREPPrivateDataSize = 224
	drepPrivateData     = 8
)

// DREP is a view of a DisconnectReply message (IBTA 12.6.11, Table 113):
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                     Local Communication ID                    |  0
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                    Remote Communication ID                    |  4
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                  Private Data (224 bytes)                     |  8
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// A DREP must be at least [DREPSize] bytes; methods do not bound-check.
type DREP []byte

// DREPFields holds the values of a DREP for [DREP.Encode].
type DREPFields struct {
	LocalCommID  uint32
	RemoteCommID uint32
	PrivateData  []byte // at most DREPPrivateDataSize bytes
}

// LocalCommID returns the "Local Communication ID" field.
func (r DREP) LocalCommID() uint32 { return localCommID(r) }

// RemoteCommID returns the "Remote Communication ID" field.
func (r DREP) RemoteCommID() uint32 { return remoteCommID(r) }

// PrivateData returns the 224-byte private-data area; it aliases r.
func (r DREP) PrivateData() []byte { return r[drepPrivateData:DREPSize:DREPSize] }

// Encode writes f into r. It returns ErrPrivateDataTooLong, writing
// nothing, when the private data does not fit.
func (r DREP) Encode(f *DREPFields) error {
	_ = r[DREPSize-1]
	if len(f.PrivateData) > DREPPrivateDataSize {
		return ErrPrivateDataTooLong
	}
	putCommIDs(r, f.LocalCommID, f.RemoteCommID)
	return putArea(r[drepPrivateData:DREPSize], f.PrivateData)
}

// Fields returns the decoded values of r. PrivateData aliases r.
func (r DREP) Fields() DREPFields {
	return DREPFields{LocalCommID: r.LocalCommID(), RemoteCommID: r.RemoteCommID(), PrivateData: r.PrivateData()}
}
