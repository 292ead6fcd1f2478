package packet

import "encoding/binary"

// ImmDtSize is the length of an Immediate Data Extended Transport Header.
const ImmDtSize = 4

// ImmDt is a view of the Immediate Data Extended Transport Header (IBTA
// 9.3.7), carried by the last (or only) packet of a SEND or RDMA WRITE "with
// immediate". The four bytes are opaque to the transport and delivered to the
// receiver's completion unchanged.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                        Immediate Data                         |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// An ImmDt must be at least [ImmDtSize] bytes; methods do not bound-check.
type ImmDt []byte

// ImmDtFields holds the values of an ImmDt for [ImmDt.Encode].
type ImmDtFields struct {
	// ImmediateData is the wire bytes read as a big-endian number, which is
	// how libibverbs' network-order imm_data looks when converted with ntohl.
	ImmediateData uint32
}

// ImmediateData returns the "Immediate Data" field, read big-endian.
func (b ImmDt) ImmediateData() uint32 { return binary.BigEndian.Uint32(b) }

// Encode writes f into b.
func (b ImmDt) Encode(f *ImmDtFields) { binary.BigEndian.PutUint32(b, f.ImmediateData) }

// Fields returns the decoded values of b.
func (b ImmDt) Fields() ImmDtFields { return ImmDtFields{ImmediateData: b.ImmediateData()} }

// ImmDt returns the ImmDt, or nil if the opcode carries none.
func (p *Parsed) ImmDt() ImmDt { return p.Ext(HeaderImmDt) }
