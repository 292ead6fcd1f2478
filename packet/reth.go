package packet

import "encoding/binary"

// RETHSize is the length of an RDMA Extended Transport Header.
const RETHSize = 16

const (
	rethVA     = 0
	rethRKey   = 8
	rethDMALen = 12
)

// RETH is a view of the RDMA Extended Transport Header (IBTA 9.3.3), carried by
// the first (or only) packet of an RDMA WRITE, by an RDMA READ request, and by
// FLUSH and ATOMIC_WRITE.
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
//	|                         DMA Length                            |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// A RETH must be at least [RETHSize] bytes; methods do not bound-check.
type RETH []byte

// RETHFields holds the values of a RETH for [RETH.Encode].
type RETHFields struct {
	VirtualAddress uint64
	RKey           uint32
	DMALength      uint32
}

// VirtualAddress returns the "Virtual Address" field.
func (b RETH) VirtualAddress() uint64 { return binary.BigEndian.Uint64(b[rethVA:]) }

// RKey returns the "Remote Key" field.
func (b RETH) RKey() uint32 { return binary.BigEndian.Uint32(b[rethRKey:]) }

// DMALength returns the "DMA Length" field: the length of the whole message.
func (b RETH) DMALength() uint32 { return binary.BigEndian.Uint32(b[rethDMALen:]) }

// Encode writes f into b.
func (b RETH) Encode(f *RETHFields) {
	_ = b[RETHSize-1]
	binary.BigEndian.PutUint64(b[rethVA:], f.VirtualAddress)
	binary.BigEndian.PutUint32(b[rethRKey:], f.RKey)
	binary.BigEndian.PutUint32(b[rethDMALen:], f.DMALength)
}

// Fields returns the decoded values of b.
func (b RETH) Fields() RETHFields {
	return RETHFields{VirtualAddress: b.VirtualAddress(), RKey: b.RKey(), DMALength: b.DMALength()}
}

// RETH returns the RETH, or nil if the opcode carries none.
func (p *Parsed) RETH() RETH { return p.Ext(HeaderRETH) }
