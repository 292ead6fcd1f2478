package packet

import "encoding/binary"

// IETHSize is the length of an Invalidate Extended Transport Header.
const IETHSize = 4

// IETH is a view of the Invalidate Extended Transport Header (IBTA 9.3.8),
// carried by the last (or only) packet of a SEND with Invalidate: the remote
// key the responder must invalidate.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                         Remote Key                            |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// An IETH must be at least [IETHSize] bytes; methods do not bound-check.
type IETH []byte

// IETHFields holds the values of an IETH for [IETH.Encode].
type IETHFields struct {
	RKey uint32
}

// RKey returns the "R_Key" field: the key to invalidate.
func (b IETH) RKey() uint32 { return binary.BigEndian.Uint32(b) }

// Encode writes f into b.
func (b IETH) Encode(f *IETHFields) { binary.BigEndian.PutUint32(b, f.RKey) }

// Fields returns the decoded values of b.
func (b IETH) Fields() IETHFields { return IETHFields{RKey: b.RKey()} }

// IETH returns the IETH, or nil if the opcode carries none.
func (p *Parsed) IETH() IETH { return p.Ext(HeaderIETH) }
