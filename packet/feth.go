package packet

import "encoding/binary"

// FETHSize is the length of a Flush Extended Transport Header.
const FETHSize = 4

const (
	fethPLTMask  = 0x0F
	fethSELMask  = 0x30
	fethSELShift = 4
)

// Values of the FETH "Placement Type" field; they are bits and may be combined.
const (
	FlushGlobalVisibility = 1 << 0
	FlushPersistence      = 1 << 1
)

// Values of the FETH "Selectivity Level" field.
const (
	FlushMemoryRange  = 0 // flush the range the RETH names
	FlushMemoryRegion = 1 // flush the whole memory region of the R_Key
)

// FETH is a view of the Flush Extended Transport Header (IBTA 1.5, memory
// placement extensions), carried by FLUSH before its RETH.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                   Reserved                        |SEL|  PLT  |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// SEL is the selectivity level, PLT the placement type. An FETH must be at
// least [FETHSize] bytes; methods do not bound-check.
type FETH []byte

// FETHFields holds the values of an FETH for [FETH.Encode].
type FETHFields struct {
	PlacementType uint8 // 4 bits: FlushGlobalVisibility | FlushPersistence
	Selectivity   uint8 // 2 bits: FlushMemoryRange or FlushMemoryRegion
}

// PlacementType returns the 4-bit "Placement Type" field.
func (b FETH) PlacementType() uint8 { return b[3] & fethPLTMask }

// Selectivity returns the 2-bit "Selectivity Level" field.
func (b FETH) Selectivity() uint8 { return (b[3] & fethSELMask) >> fethSELShift }

// Encode writes f into b, zeroing the reserved bits.
func (b FETH) Encode(f *FETHFields) {
	binary.BigEndian.PutUint32(b, uint32(f.PlacementType&fethPLTMask)|
		uint32(f.Selectivity<<fethSELShift&fethSELMask))
}

// Fields returns the decoded values of b.
func (b FETH) Fields() FETHFields {
	return FETHFields{PlacementType: b.PlacementType(), Selectivity: b.Selectivity()}
}

// FETH returns the FETH, or nil if the opcode carries none.
func (p *Parsed) FETH() FETH { return p.Ext(HeaderFETH) }
