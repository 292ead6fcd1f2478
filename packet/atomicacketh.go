package packet

import "encoding/binary"

// AtomicAckETHSize is the length of an Atomic Acknowledge Extended Transport
// Header.
const AtomicAckETHSize = 8

// AtomicAckETH is a view of the Atomic Acknowledge Extended Transport Header
// (IBTA 9.3.6), which follows the AETH of an ATOMIC_ACKNOWLEDGE and returns
// the value the target held before the atomic operation.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                Original Remote Data (63..32)                  |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                Original Remote Data (31..0)                   |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// An AtomicAckETH must be at least [AtomicAckETHSize] bytes; methods do not
// bound-check.
type AtomicAckETH []byte

// AtomicAckETHFields holds the values of an AtomicAckETH for
// [AtomicAckETH.Encode].
type AtomicAckETHFields struct {
	OriginalRemoteData uint64
}

// OriginalRemoteData returns the "Original Remote Data" field.
func (b AtomicAckETH) OriginalRemoteData() uint64 { return binary.BigEndian.Uint64(b) }

// Encode writes f into b.
func (b AtomicAckETH) Encode(f *AtomicAckETHFields) {
	binary.BigEndian.PutUint64(b, f.OriginalRemoteData)
}

// Fields returns the decoded values of b.
func (b AtomicAckETH) Fields() AtomicAckETHFields {
	return AtomicAckETHFields{OriginalRemoteData: b.OriginalRemoteData()}
}

// AtomicAckETH returns the AtomicAckETH, or nil if the opcode carries none.
func (p *Parsed) AtomicAckETH() AtomicAckETH { return p.Ext(HeaderAtomicAckETH) }
