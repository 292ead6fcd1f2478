package mad

// RTUSize is the length of an RTU message; RTUPrivateDataSize the length of
// its private-data area (IB_CM_RTU_PRIVATE_DATA_SIZE).
const (
	RTUSize            = DataSize
	RTUPrivateDataSize = 224
	rtuPrivateData     = 8
)

// RTU is a view of a ReadyToUse message (IBTA 12.6.9, Table 111), which the
// active side sends once its QP is ready to send:
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
// An RTU must be at least [RTUSize] bytes; methods do not bound-check.
type RTU []byte

// RTUFields holds the values of an RTU for [RTU.Encode].
type RTUFields struct {
	LocalCommID  uint32
	RemoteCommID uint32
	PrivateData  []byte // at most RTUPrivateDataSize bytes
}

// LocalCommID returns the "Local Communication ID" field.
func (r RTU) LocalCommID() uint32 { return localCommID(r) }

// RemoteCommID returns the "Remote Communication ID" field.
func (r RTU) RemoteCommID() uint32 { return remoteCommID(r) }

// PrivateData returns the 224-byte private-data area; it aliases r.
func (r RTU) PrivateData() []byte { return r[rtuPrivateData:RTUSize:RTUSize] }

// Encode writes f into r. It returns ErrPrivateDataTooLong, writing
// nothing, when the private data does not fit.
func (r RTU) Encode(f *RTUFields) error {
	_ = r[RTUSize-1]
	if len(f.PrivateData) > RTUPrivateDataSize {
		return ErrPrivateDataTooLong
	}
	putCommIDs(r, f.LocalCommID, f.RemoteCommID)
	return putArea(r[rtuPrivateData:RTUSize], f.PrivateData)
}

// Fields returns the decoded values of r. PrivateData aliases r.
func (r RTU) Fields() RTUFields {
	return RTUFields{LocalCommID: r.LocalCommID(), RemoteCommID: r.RemoteCommID(), PrivateData: r.PrivateData()}
}
