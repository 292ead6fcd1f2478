package packet

import "encoding/binary"

// AtomicETHSize is the length of an Atomic Extended Transport Header.
const AtomicETHSize = 28

const (
	atomicVA      = 0
	atomicRKey    = 8
	atomicSwapAdd = 12
	atomicCompare = 20
)

// AtomicETH is a view of the Atomic Extended Transport Header (IBTA 9.3.4),
// carried by COMPARE_SWAP and FETCH_ADD requests. It is packed: the 64-bit
// data fields are not 8-byte aligned.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                  Virtual Address (63..32)                     |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                  Virtual Address (31..0)                      |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                         Remote Key                            |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                 Swap (or Add) Data (63..32)                   |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                 Swap (or Add) Data (31..0)                    |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                    Compare Data (63..32)                      |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                    Compare Data (31..0)                       |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// An AtomicETH must be at least [AtomicETHSize] bytes; methods do not
// bound-check.
type AtomicETH []byte

// AtomicETHFields holds the values of an AtomicETH for [AtomicETH.Encode].
type AtomicETHFields struct {
	VirtualAddress uint64
	RKey           uint32
	SwapAddData    uint64
	CompareData    uint64
}

// VirtualAddress returns the "Virtual Address" field (8-byte aligned target).
func (b AtomicETH) VirtualAddress() uint64 { return binary.BigEndian.Uint64(b[atomicVA:]) }

// RKey returns the "Remote Key" field.
func (b AtomicETH) RKey() uint32 { return binary.BigEndian.Uint32(b[atomicRKey:]) }

// SwapAddData returns the "Swap (or Add) Data" field: the value to store for
// COMPARE_SWAP, the addend for FETCH_ADD.
func (b AtomicETH) SwapAddData() uint64 { return binary.BigEndian.Uint64(b[atomicSwapAdd:]) }

// CompareData returns the "Compare Data" field (ignored by FETCH_ADD).
func (b AtomicETH) CompareData() uint64 { return binary.BigEndian.Uint64(b[atomicCompare:]) }

// Encode writes f into b.
func (b AtomicETH) Encode(f *AtomicETHFields) {
	_ = b[AtomicETHSize-1]
	binary.BigEndian.PutUint64(b[atomicVA:], f.VirtualAddress)
	binary.BigEndian.PutUint32(b[atomicRKey:], f.RKey)
	binary.BigEndian.PutUint64(b[atomicSwapAdd:], f.SwapAddData)
	binary.BigEndian.PutUint64(b[atomicCompare:], f.CompareData)
}

// Fields returns the decoded values of b.
func (b AtomicETH) Fields() AtomicETHFields {
	return AtomicETHFields{
		VirtualAddress: b.VirtualAddress(),
		RKey:           b.RKey(),
		SwapAddData:    b.SwapAddData(),
		CompareData:    b.CompareData(),
	}
}

// AtomicETH returns the AtomicETH, or nil if the opcode carries none.
func (p *Parsed) AtomicETH() AtomicETH { return p.Ext(HeaderAtomicETH) }
