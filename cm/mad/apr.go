package mad

// APR sizes (IB_CM_APR_PRIVATE_DATA_SIZE, IB_CM_APR_INFO_LENGTH).
const (
	APRSize            = DataSize
	APRPrivateDataSize = 148
	APRInfoSize        = 72
	aprInfoLength      = 8
	aprStatus          = 9
	aprInfo            = 12
	aprPrivateData     = 84
)

// APR is a view of an AlternatePathResponse message (IBTA 12.8.2, Table 116),
// the answer to a LAP:
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                     Local Communication ID                    |  0
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                    Remote Communication ID                    |  4
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	| AddInfo Length|   AP Status   |           Reserved            |  8
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|             Additional Information (72 bytes)                 | 12
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                  Private Data (148 bytes)                     | 84
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// An APR must be at least [APRSize] bytes; methods do not bound-check.
type APR []byte

// APRFields holds the values of an APR for [APR.Encode].
type APRFields struct {
	LocalCommID  uint32
	RemoteCommID uint32
	Status       APRStatus
	Info         []byte // at most APRInfoSize bytes; its length is AddInfoLength
	PrivateData  []byte // at most APRPrivateDataSize bytes
}

// LocalCommID returns the "Local Communication ID" field.
func (r APR) LocalCommID() uint32 { return localCommID(r) }

// RemoteCommID returns the "Remote Communication ID" field.
func (r APR) RemoteCommID() uint32 { return remoteCommID(r) }

// AddInfoLength returns the "Additional Info Length" as sent.
func (r APR) AddInfoLength() uint8 { return r[aprInfoLength] }

// Status returns the "AP Status" field.
func (r APR) Status() APRStatus { return APRStatus(r[aprStatus]) }

// Info returns the meaningful additional-information bytes, the length
// clamped to the 72-byte area; it aliases r.
func (r APR) Info() []byte {
	n := min(int(r.AddInfoLength()), APRInfoSize)
	return r[aprInfo : aprInfo+n : aprInfo+n]
}

// PrivateData returns the 148-byte private-data area; it aliases r.
func (r APR) PrivateData() []byte { return r[aprPrivateData:APRSize:APRSize] }

// Encode writes f into r. It returns ErrPrivateDataTooLong, writing
// nothing, when the information or the private data does not fit.
func (r APR) Encode(f *APRFields) error {
	_ = r[APRSize-1]
	if len(f.PrivateData) > APRPrivateDataSize || len(f.Info) > APRInfoSize {
		return ErrPrivateDataTooLong
	}
	putCommIDs(r, f.LocalCommID, f.RemoteCommID)
	r[aprInfoLength] = byte(len(f.Info))
	r[aprStatus] = byte(f.Status)
	r[aprStatus+1], r[aprStatus+2] = 0, 0
	_ = putArea(r[aprInfo:aprPrivateData], f.Info)
	return putArea(r[aprPrivateData:APRSize], f.PrivateData)
}

// Fields returns the decoded values of r. Info and PrivateData alias r.
func (r APR) Fields() APRFields {
	return APRFields{
		LocalCommID:  r.LocalCommID(),
		RemoteCommID: r.RemoteCommID(),
		Status:       r.Status(),
		Info:         r.Info(),
		PrivateData:  r.PrivateData(),
	}
}
