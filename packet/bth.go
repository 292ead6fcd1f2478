package packet

import "encoding/binary"

// BTHSize is the length of a Base Transport Header.
const BTHSize = 12

// Offsets and bit masks of the BTH fields.
const (
	bthOpcode = 0
	bthFlags  = 1
	bthPKey   = 2
	bthECN    = 4
	bthDestQP = 5
	bthAck    = 8
	bthPSN    = 9

	bthSEBit     = 0x80
	bthMigReqBit = 0x40
	bthPadMask   = 0x30
	bthPadShift  = 4
	bthTVerMask  = 0x0F
	bthFECNBit   = 0x80
	bthBECNBit   = 0x40
	bthAckReqBit = 0x80
)

// QPNMask masks a value to the 24 bits of a queue pair number.
const QPNMask = 0xFFFFFF

// BTH is a view of the Base Transport Header (IBTA 9.2), which starts every
// RoCEv2 packet. Fields are big-endian.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|    OpCode     |S|M|Pad| TVer  |        Partition Key          |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|F|B|  Resv6a   |             Destination QP                    |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|A|   Resv7     |           Packet Sequence Number              |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// S is SolicitedEvent, M MigReq, F and B the RoCEv2 FECN and BECN bits, A
// AckReq. A BTH must be at least [BTHSize] bytes; methods do not bound-check.
type BTH []byte

// BTHFields holds the values of a BTH for [BTH.Encode].
type BTHFields struct {
	Opcode           Opcode
	SolicitedEvent   bool
	MigReq           bool
	PadCount         uint8 // 0..3
	TransportVersion uint8 // 0..15; must be 0 on the wire
	PKey             uint16
	FECN             bool
	BECN             bool
	DestQP           uint32 // 24 bits
	AckReq           bool
	PSN              PSN
}

// Opcode returns the "OpCode" field.
func (b BTH) Opcode() Opcode { return Opcode(b[bthOpcode]) }

// SolicitedEvent returns the "Solicited Event" (SE) bit.
func (b BTH) SolicitedEvent() bool { return b[bthFlags]&bthSEBit != 0 }

// MigReq returns the "MigReq" (M) bit, used by automatic path migration.
func (b BTH) MigReq() bool { return b[bthFlags]&bthMigReqBit != 0 }

// PadCount returns the "Pad Count" field: how many pad bytes follow the payload.
func (b BTH) PadCount() uint8 { return (b[bthFlags] & bthPadMask) >> bthPadShift }

// TransportVersion returns the "Transport Header Version" (TVer) field.
func (b BTH) TransportVersion() uint8 { return b[bthFlags] & bthTVerMask }

// PKey returns the "Partition Key" field.
func (b BTH) PKey() uint16 { return binary.BigEndian.Uint16(b[bthPKey:]) }

// FECN returns the "Forward Explicit Congestion Notification" bit.
func (b BTH) FECN() bool { return b[bthECN]&bthFECNBit != 0 }

// BECN returns the "Backward Explicit Congestion Notification" bit.
func (b BTH) BECN() bool { return b[bthECN]&bthBECNBit != 0 }

// DestQP returns the 24-bit "Destination QP" field.
func (b BTH) DestQP() uint32 { return uint24(b[bthDestQP:]) }

// AckReq returns the "Acknowledge Request" (A) bit.
func (b BTH) AckReq() bool { return b[bthAck]&bthAckReqBit != 0 }

// PSN returns the 24-bit "Packet Sequence Number" field.
func (b BTH) PSN() PSN { return PSN(uint24(b[bthPSN:])) }

// Encode writes every field of f into b, zeroing the reserved bits. Values
// wider than their field are truncated to it.
func (b BTH) Encode(f *BTHFields) {
	_ = b[BTHSize-1]
	b[bthOpcode] = byte(f.Opcode)
	b[bthFlags] = boolBit(f.SolicitedEvent, bthSEBit) | boolBit(f.MigReq, bthMigReqBit) |
		(f.PadCount<<bthPadShift)&bthPadMask | f.TransportVersion&bthTVerMask
	binary.BigEndian.PutUint16(b[bthPKey:], f.PKey)
	binary.BigEndian.PutUint32(b[bthECN:], f.DestQP&QPNMask)
	b[bthECN] = boolBit(f.FECN, bthFECNBit) | boolBit(f.BECN, bthBECNBit)
	binary.BigEndian.PutUint32(b[bthAck:], uint32(f.PSN)&PSNMask)
	b[bthAck] = boolBit(f.AckReq, bthAckReqBit)
}

// Fields returns the decoded values of every field of b.
func (b BTH) Fields() BTHFields {
	return BTHFields{
		Opcode:           b.Opcode(),
		SolicitedEvent:   b.SolicitedEvent(),
		MigReq:           b.MigReq(),
		PadCount:         b.PadCount(),
		TransportVersion: b.TransportVersion(),
		PKey:             b.PKey(),
		FECN:             b.FECN(),
		BECN:             b.BECN(),
		DestQP:           b.DestQP(),
		AckReq:           b.AckReq(),
		PSN:              b.PSN(),
	}
}

// The setters below re-stamp the fields that change from packet to packet of
// one message, so a requester can keep a per-QP header template and rewrite
// only these bytes instead of encoding the whole header each time.

// SetOpcode sets the "OpCode" field.
func (b BTH) SetOpcode(op Opcode) { b[bthOpcode] = byte(op) }

// SetSolicitedEvent sets the "Solicited Event" bit.
func (b BTH) SetSolicitedEvent(v bool) { setBit(&b[bthFlags], bthSEBit, v) }

// SetPadCount sets the "Pad Count" field to n&3.
func (b BTH) SetPadCount(n uint8) {
	b[bthFlags] = b[bthFlags]&^bthPadMask | (n<<bthPadShift)&bthPadMask
}

// SetFECN sets the FECN bit. The ICRC does not cover it, so switches may
// change it in flight.
func (b BTH) SetFECN(v bool) { setBit(&b[bthECN], bthFECNBit, v) }

// SetBECN sets the BECN bit, which the ICRC does not cover either.
func (b BTH) SetBECN(v bool) { setBit(&b[bthECN], bthBECNBit, v) }

// SetDestQP sets the 24-bit "Destination QP" field, keeping FECN and BECN.
func (b BTH) SetDestQP(qpn uint32) { putUint24(b[bthDestQP:], qpn) }

// SetAckReq sets the "Acknowledge Request" bit.
func (b BTH) SetAckReq(v bool) { setBit(&b[bthAck], bthAckReqBit, v) }

// SetPSN sets the 24-bit "Packet Sequence Number", keeping AckReq.
func (b BTH) SetPSN(p PSN) { putUint24(b[bthPSN:], uint32(p)) }

func uint24(b []byte) uint32 {
	_ = b[2]
	return uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2])
}

func putUint24(b []byte, v uint32) {
	_ = b[2]
	b[0], b[1], b[2] = byte(v>>16), byte(v>>8), byte(v)
}

func boolBit(v bool, bit byte) byte {
	if v {
		return bit
	}
	return 0
}

func setBit(p *byte, bit byte, v bool) {
	if v {
		*p |= bit
	} else {
		*p &^= bit
	}
}
