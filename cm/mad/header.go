package mad

import "encoding/binary"

// Sizes of a MAD and its parts (IBTA 13.4.2; include/rdma/ib_mad.h).
const (
	// Size is the length of every CM MAD on the wire.
	Size = 256
	// HeaderSize is the length of the common MAD header.
	HeaderSize = 24
	// DataSize is the length of the CM message that follows the header.
	DataSize = Size - HeaderSize
)

// Values of the MAD header that every CM message carries.
const (
	// BaseVersion is the MAD format version (IB_MGMT_BASE_VERSION).
	BaseVersion = 1
	// ClassCM is the management class of the communication manager
	// (IB_MGMT_CLASS_CM).
	ClassCM = 0x07
	// ClassVersionCM is the CM class version (IB_CM_CLASS_VERSION).
	ClassVersionCM = 2
	// MethodSend is the only method CM messages use (IB_MGMT_METHOD_SEND):
	// every CM message is a one-way datagram; replies are messages of their own.
	MethodSend = 0x03
)

const (
	hdrBaseVersion   = 0
	hdrClass         = 1
	hdrClassVersion  = 2
	hdrMethod        = 3
	hdrStatus        = 4
	hdrClassSpecific = 6
	hdrTID           = 8
	hdrAttrID        = 16
	hdrAttrMod       = 20
)

// Header is a view of the common MAD header (IBTA 13.4.3, Figure 146).
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|  BaseVersion  |   MgmtClass   | ClassVersion  |R|   Method    |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|            Status             |         ClassSpecific         |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                        TransactionID                          |
//	+                                                               +
//	|                                                               |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|          AttributeID          |           Reserved            |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                      AttributeModifier                        |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// R is the response bit of the method byte; CM methods never set it. A Header
// must be at least [HeaderSize] bytes; methods do not bound-check.
type Header []byte

// HeaderFields holds the values of a MAD header for [Header.Encode].
type HeaderFields struct {
	BaseVersion   uint8
	Class         uint8
	ClassVersion  uint8
	Method        uint8
	Status        uint16
	ClassSpecific uint16
	TID           uint64
	AttrID        AttrID
	AttrMod       uint32
}

// CMHeader returns the header fields of a CM message with the given
// attribute and transaction ID.
func CMHeader(attr AttrID, tid uint64) HeaderFields {
	return HeaderFields{
		BaseVersion:  BaseVersion,
		Class:        ClassCM,
		ClassVersion: ClassVersionCM,
		Method:       MethodSend,
		TID:          tid,
		AttrID:       attr,
	}
}

// BaseVersion returns the "BaseVersion" field.
func (h Header) BaseVersion() uint8 { return h[hdrBaseVersion] }

// Class returns the "MgmtClass" field.
func (h Header) Class() uint8 { return h[hdrClass] }

// ClassVersion returns the "ClassVersion" field.
func (h Header) ClassVersion() uint8 { return h[hdrClassVersion] }

// Method returns the "Method" field, response bit included.
func (h Header) Method() uint8 { return h[hdrMethod] }

// Status returns the "Status" field.
func (h Header) Status() uint16 { return binary.BigEndian.Uint16(h[hdrStatus:]) }

// ClassSpecific returns the "ClassSpecific" field.
func (h Header) ClassSpecific() uint16 { return binary.BigEndian.Uint16(h[hdrClassSpecific:]) }

// TID returns the "TransactionID" field. The CM forms it from its agent's
// high half and the sender's local communication ID; a reply echoes the TID
// of the message it answers.
func (h Header) TID() uint64 { return binary.BigEndian.Uint64(h[hdrTID:]) }

// AttrID returns the "AttributeID" field, which names the CM message.
func (h Header) AttrID() AttrID { return AttrID(binary.BigEndian.Uint16(h[hdrAttrID:])) }

// AttrMod returns the "AttributeModifier" field.
func (h Header) AttrMod() uint32 { return binary.BigEndian.Uint32(h[hdrAttrMod:]) }

// Encode writes f into h, zeroing the reserved field.
func (h Header) Encode(f *HeaderFields) {
	_ = h[HeaderSize-1]
	h[hdrBaseVersion] = f.BaseVersion
	h[hdrClass] = f.Class
	h[hdrClassVersion] = f.ClassVersion
	h[hdrMethod] = f.Method
	binary.BigEndian.PutUint16(h[hdrStatus:], f.Status)
	binary.BigEndian.PutUint16(h[hdrClassSpecific:], f.ClassSpecific)
	binary.BigEndian.PutUint64(h[hdrTID:], f.TID)
	binary.BigEndian.PutUint16(h[hdrAttrID:], uint16(f.AttrID))
	binary.BigEndian.PutUint16(h[hdrAttrID+2:], 0)
	binary.BigEndian.PutUint32(h[hdrAttrMod:], f.AttrMod)
}

// Fields returns the decoded values of h.
func (h Header) Fields() HeaderFields {
	return HeaderFields{
		BaseVersion:   h.BaseVersion(),
		Class:         h.Class(),
		ClassVersion:  h.ClassVersion(),
		Method:        h.Method(),
		Status:        h.Status(),
		ClassSpecific: h.ClassSpecific(),
		TID:           h.TID(),
		AttrID:        h.AttrID(),
		AttrMod:       h.AttrMod(),
	}
}
