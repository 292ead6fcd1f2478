package packet

import "encoding/binary"

// DETHSize is the length of a Datagram Extended Transport Header.
const DETHSize = 8

// GSIQKey is the Q_Key of the General Services Interface (QP1), which carries
// the communication manager's MADs.
const GSIQKey = 0x80010000

const (
	dethQKey  = 0
	dethSrcQP = 5
)

// DETH is a view of the Datagram Extended Transport Header (IBTA 9.3.2),
// carried by every UD (and RD request) packet.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                          Queue Key                            |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|   Reserved    |                 Source QP                     |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// A DETH must be at least [DETHSize] bytes; methods do not bound-check.
type DETH []byte

// DETHFields holds the values of a DETH for [DETH.Encode].
type DETHFields struct {
	QKey  uint32
	SrcQP uint32 // 24 bits
}

// QKey returns the "Queue Key" field.
func (b DETH) QKey() uint32 { return binary.BigEndian.Uint32(b[dethQKey:]) }

// SrcQP returns the 24-bit "Source QP" field.
func (b DETH) SrcQP() uint32 { return uint24(b[dethSrcQP:]) }

// Encode writes f into b, zeroing the reserved byte.
func (b DETH) Encode(f *DETHFields) {
	_ = b[DETHSize-1]
	binary.BigEndian.PutUint32(b[dethQKey:], f.QKey)
	binary.BigEndian.PutUint32(b[dethQKey+4:], f.SrcQP&QPNMask)
}

// Fields returns the decoded values of b.
func (b DETH) Fields() DETHFields { return DETHFields{QKey: b.QKey(), SrcQP: b.SrcQP()} }

// DETH returns the DETH, or nil if the opcode carries none.
func (p *Parsed) DETH() DETH { return p.Ext(HeaderDETH) }
