package packet

import "encoding/binary"

// RDETHSize is the length of a Reliable Datagram Extended Transport Header.
const RDETHSize = 4

// RDETH is a view of the Reliable Datagram Extended Transport Header (IBTA
// 9.3.1). It appears only on RD packets, which the opcode table knows but
// which no RoCE implementation in use sends.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|   Reserved    |                 EE-Context                    |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// An RDETH must be at least [RDETHSize] bytes; methods do not bound-check.
type RDETH []byte

// RDETHFields holds the values of an RDETH for [RDETH.Encode].
type RDETHFields struct {
	EEContext uint32 // 24 bits
}

// EEContext returns the 24-bit "EE-Context" field.
func (b RDETH) EEContext() uint32 { return uint24(b[1:]) }

// Encode writes f into b, zeroing the reserved byte.
func (b RDETH) Encode(f *RDETHFields) {
	binary.BigEndian.PutUint32(b, f.EEContext&QPNMask)
}

// Fields returns the decoded values of b.
func (b RDETH) Fields() RDETHFields { return RDETHFields{EEContext: b.EEContext()} }

// RDETH returns the RDETH, or nil if the opcode carries none.
func (p *Parsed) RDETH() RDETH { return p.Ext(HeaderRDETH) }
