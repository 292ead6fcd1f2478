package mad

import "encoding/binary"

// SIDR sizes (IB_CM_SIDR_REQ_PRIVATE_DATA_SIZE, IB_CM_SIDR_REP_*).
const (
	SIDRREQSize            = DataSize
	SIDRREQPrivateDataSize = 216
	SIDRREPSize            = DataSize
	SIDRREPPrivateDataSize = 136
	SIDRREPInfoSize        = 72

	sidrReqRequestID   = 0
	sidrReqPKey        = 4
	sidrReqServiceID   = 8
	sidrReqPrivateData = 16

	sidrRepRequestID   = 0
	sidrRepStatus      = 4
	sidrRepInfoLength  = 5
	sidrRepQPN         = 8 // 24 bits
	sidrRepServiceID   = 12
	sidrRepQKey        = 20
	sidrRepInfo        = 24
	sidrRepPrivateData = 96
)

// SIDRREQ is a view of a ServiceIDResolutionRequest (IBTA 12.11.1, Table
// 119), with which a UD client asks which QPN and Q_Key serve a service ID:
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                          Request ID                           |  0
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|        Partition Key          |           Reserved            |  4
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                     ServiceID (8 bytes)                       |  8
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                  Private Data (216 bytes)                     | 16
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// RDMA-CM puts its [CMAHeader] first in the private data, as in a REQ. A
// SIDRREQ must be at least [SIDRREQSize] bytes; methods do not bound-check.
type SIDRREQ []byte

// SIDRREQFields holds the values of a SIDR_REQ for [SIDRREQ.Encode].
type SIDRREQFields struct {
	RequestID   uint32
	PKey        uint16
	ServiceID   uint64
	PrivateData []byte // at most SIDRREQPrivateDataSize bytes
}

// RequestID returns the "RequestID" field.
func (r SIDRREQ) RequestID() uint32 { return binary.BigEndian.Uint32(r[sidrReqRequestID:]) }

// PKey returns the "Partition Key" field.
func (r SIDRREQ) PKey() uint16 { return binary.BigEndian.Uint16(r[sidrReqPKey:]) }

// ServiceID returns the "ServiceID" field.
func (r SIDRREQ) ServiceID() uint64 { return binary.BigEndian.Uint64(r[sidrReqServiceID:]) }

// PrivateData returns the 216-byte private-data area; it aliases r.
func (r SIDRREQ) PrivateData() []byte { return r[sidrReqPrivateData:SIDRREQSize:SIDRREQSize] }

// Encode writes f into r. It returns ErrPrivateDataTooLong, writing
// nothing, when the private data does not fit.
func (r SIDRREQ) Encode(f *SIDRREQFields) error {
	_ = r[SIDRREQSize-1]
	if len(f.PrivateData) > SIDRREQPrivateDataSize {
		return ErrPrivateDataTooLong
	}
	binary.BigEndian.PutUint32(r[sidrReqRequestID:], f.RequestID)
	binary.BigEndian.PutUint16(r[sidrReqPKey:], f.PKey)
	binary.BigEndian.PutUint16(r[sidrReqPKey+2:], 0)
	binary.BigEndian.PutUint64(r[sidrReqServiceID:], f.ServiceID)
	return putArea(r[sidrReqPrivateData:SIDRREQSize], f.PrivateData)
}

// Fields returns the decoded values of r. PrivateData aliases r.
func (r SIDRREQ) Fields() SIDRREQFields {
	return SIDRREQFields{RequestID: r.RequestID(), PKey: r.PKey(), ServiceID: r.ServiceID(), PrivateData: r.PrivateData()}
}

// SIDRREP is a view of a ServiceIDResolutionResponse (IBTA 12.11.2, Table
// 120):
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                          Request ID                           |  0
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|    Status     | AddInfo Length|           Reserved            |  4
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                      QPN                      |   Reserved    |  8
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                     ServiceID (8 bytes)                       | 12
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                             Q_Key                             | 20
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|            Class Port Info / Additional Info (72 bytes)       | 24
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                  Private Data (136 bytes)                     | 96
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// A SIDRREP must be at least [SIDRREPSize] bytes; methods do not bound-check.
type SIDRREP []byte

// SIDRREPFields holds the values of a SIDR_REP for [SIDRREP.Encode].
type SIDRREPFields struct {
	RequestID   uint32
	Status      SIDRStatus
	QPN         uint32 // 24 bits
	ServiceID   uint64
	QKey        uint32
	Info        []byte // at most SIDRREPInfoSize bytes; its length is AddInfoLength
	PrivateData []byte // at most SIDRREPPrivateDataSize bytes
}

// RequestID returns the "RequestID" field: the SIDR_REQ's.
func (r SIDRREP) RequestID() uint32 { return binary.BigEndian.Uint32(r[sidrRepRequestID:]) }

// Status returns the "Status" field.
func (r SIDRREP) Status() SIDRStatus { return SIDRStatus(r[sidrRepStatus]) }

// AddInfoLength returns the "Additional Information Length" as sent.
func (r SIDRREP) AddInfoLength() uint8 { return r[sidrRepInfoLength] }

// QPN returns the 24-bit "QPN" field: the UD QP serving the service.
func (r SIDRREP) QPN() uint32 { return uint24(r[sidrRepQPN:]) }

// ServiceID returns the "ServiceID" field.
func (r SIDRREP) ServiceID() uint64 { return binary.BigEndian.Uint64(r[sidrRepServiceID:]) }

// QKey returns the "Q_Key" field.
func (r SIDRREP) QKey() uint32 { return binary.BigEndian.Uint32(r[sidrRepQKey:]) }

// Info returns the meaningful additional-information bytes, the length
// clamped to the 72-byte area; it aliases r.
func (r SIDRREP) Info() []byte {
	n := min(int(r.AddInfoLength()), SIDRREPInfoSize)
	return r[sidrRepInfo : sidrRepInfo+n : sidrRepInfo+n]
}

// PrivateData returns the 136-byte private-data area; it aliases r.
func (r SIDRREP) PrivateData() []byte { return r[sidrRepPrivateData:SIDRREPSize:SIDRREPSize] }

// Encode writes f into r. It returns ErrPrivateDataTooLong, writing
// nothing, when the information or the private data does not fit.
func (r SIDRREP) Encode(f *SIDRREPFields) error {
	_ = r[SIDRREPSize-1]
	if len(f.PrivateData) > SIDRREPPrivateDataSize || len(f.Info) > SIDRREPInfoSize {
		return ErrPrivateDataTooLong
	}
	binary.BigEndian.PutUint32(r[sidrRepRequestID:], f.RequestID)
	r[sidrRepStatus] = byte(f.Status)
	r[sidrRepInfoLength] = byte(len(f.Info))
	r[sidrRepInfoLength+1], r[sidrRepInfoLength+2] = 0, 0
	putUint24(r[sidrRepQPN:], f.QPN)
	r[sidrRepQPN+3] = 0
	binary.BigEndian.PutUint64(r[sidrRepServiceID:], f.ServiceID)
	binary.BigEndian.PutUint32(r[sidrRepQKey:], f.QKey)
	_ = putArea(r[sidrRepInfo:sidrRepPrivateData], f.Info)
	return putArea(r[sidrRepPrivateData:SIDRREPSize], f.PrivateData)
}

// Fields returns the decoded values of r. Info and PrivateData alias r.
func (r SIDRREP) Fields() SIDRREPFields {
	return SIDRREPFields{
		RequestID:   r.RequestID(),
		Status:      r.Status(),
		QPN:         r.QPN(),
		ServiceID:   r.ServiceID(),
		QKey:        r.QKey(),
		Info:        r.Info(),
		PrivateData: r.PrivateData(),
	}
}
