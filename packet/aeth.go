package packet

import "encoding/binary"

// AETHSize is the length of an ACK Extended Transport Header.
const AETHSize = 4

// AETH is a view of the ACK Extended Transport Header (IBTA 9.3.5), carried by
// acknowledgements, atomic acknowledgements and the first, last and only RDMA
// READ response packets.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|   Syndrome    |              Message Sequence Number          |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// An AETH must be at least [AETHSize] bytes; methods do not bound-check.
type AETH []byte

// AETHFields holds the values of an AETH for [AETH.Encode].
type AETHFields struct {
	Syndrome Syndrome
	MSN      uint32 // 24 bits
}

// Syndrome returns the "Syndrome" field.
func (b AETH) Syndrome() Syndrome { return Syndrome(b[0]) }

// MSN returns the 24-bit "Message Sequence Number" field.
func (b AETH) MSN() uint32 { return uint24(b[1:]) }

// SetSyndrome sets the "Syndrome" field.
func (b AETH) SetSyndrome(s Syndrome) { b[0] = byte(s) }

// SetMSN sets the 24-bit "Message Sequence Number" field.
func (b AETH) SetMSN(msn uint32) { putUint24(b[1:], msn) }

// Encode writes f into b.
func (b AETH) Encode(f *AETHFields) {
	binary.BigEndian.PutUint32(b, uint32(f.Syndrome)<<24|f.MSN&0xFFFFFF)
}

// Fields returns the decoded values of b.
func (b AETH) Fields() AETHFields { return AETHFields{Syndrome: b.Syndrome(), MSN: b.MSN()} }

// AETH returns the AETH, or nil if the opcode carries none.
func (p *Parsed) AETH() AETH { return p.Ext(HeaderAETH) }

// Syndrome is the AETH syndrome byte (IBTA 9.7.5.1): the top three bits give
// the kind of acknowledgement, the low five bits a kind-specific value (credit
// count, RNR timer code or NAK code).
//
//	 7 6 5 4 3 2 1 0
//	+-+-+-+-+-+-+-+-+
//	|0|Type |  Value|
//	+-+-+-+-+-+-+-+-+
type Syndrome uint8

// SyndromeType is the kind of acknowledgement a [Syndrome] encodes.
type SyndromeType uint8

// Syndrome types (the syndrome with its value bits cleared).
const (
	SyndromeTypeACK      SyndromeType = 0x00
	SyndromeTypeRNRNAK   SyndromeType = 0x20
	SyndromeTypeReserved SyndromeType = 0x40
	SyndromeTypeNAK      SyndromeType = 0x60
)

// Well-known syndromes.
const (
	// SyndromeACKUnlimited is a positive ACK with the "unlimited credits"
	// credit code, the only ACK syndrome rxe sends.
	SyndromeACKUnlimited Syndrome = 0x1F

	// SyndromeNAKPSNSequenceError asks the requester to resend from the
	// AETH's PSN.
	SyndromeNAKPSNSequenceError Syndrome = 0x60
	// SyndromeNAKInvalidRequest reports an unsupported or malformed request.
	SyndromeNAKInvalidRequest Syndrome = 0x61
	// SyndromeNAKRemoteAccessError reports an R_Key, bounds or access-right
	// violation.
	SyndromeNAKRemoteAccessError Syndrome = 0x62
	// SyndromeNAKRemoteOperationalError reports a responder failure that is
	// not the requester's fault.
	SyndromeNAKRemoteOperationalError Syndrome = 0x63
	// SyndromeNAKInvalidRDRequest is the RD-only invalid request NAK.
	SyndromeNAKInvalidRDRequest Syndrome = 0x64
)

const (
	syndromeTypeMask  = 0x60
	syndromeValueMask = 0x1F
)

// SyndromeRNRNAK returns the RNR NAK syndrome with the given 5-bit RNR timer
// code (IBTA table 45).
func SyndromeRNRNAK(timer uint8) Syndrome {
	return Syndrome(uint8(SyndromeTypeRNRNAK) | timer&syndromeValueMask)
}

// SyndromeACK returns the ACK syndrome with the given 5-bit credit code
// (0x1F means unlimited credits).
func SyndromeACK(credits uint8) Syndrome {
	return Syndrome(uint8(SyndromeTypeACK) | credits&syndromeValueMask)
}

// Type returns the kind of acknowledgement.
func (s Syndrome) Type() SyndromeType { return SyndromeType(s & syndromeTypeMask) }

// Value returns the low five bits: the credit count of an ACK, the timer code
// of an RNR NAK, the NAK code of a NAK.
func (s Syndrome) Value() uint8 { return uint8(s) & syndromeValueMask }

// IsACK reports whether s is a positive acknowledgement.
func (s Syndrome) IsACK() bool { return s.Type() == SyndromeTypeACK }

// String returns the IBTA name of well-known syndromes, otherwise the type
// and value.
func (s Syndrome) String() string {
	switch s {
	case SyndromeACKUnlimited:
		return "ACK"
	case SyndromeNAKPSNSequenceError:
		return "NAK_PSN_SEQUENCE_ERROR"
	case SyndromeNAKInvalidRequest:
		return "NAK_INVALID_REQUEST"
	case SyndromeNAKRemoteAccessError:
		return "NAK_REMOTE_ACCESS_ERROR"
	case SyndromeNAKRemoteOperationalError:
		return "NAK_REMOTE_OPERATIONAL_ERROR"
	case SyndromeNAKInvalidRDRequest:
		return "NAK_INVALID_RD_REQUEST"
	}
	v := [2]byte{hexDigit(s.Value() >> 4), hexDigit(s.Value())}
	switch s.Type() {
	case SyndromeTypeACK:
		return "ACK(credits=0x" + string(v[:]) + ")"
	case SyndromeTypeRNRNAK:
		return "RNR_NAK(timer=0x" + string(v[:]) + ")"
	case SyndromeTypeNAK:
		return "NAK(code=0x" + string(v[:]) + ")"
	}
	return "RESERVED_SYNDROME(0x" + string(v[:]) + ")"
}

func hexDigit(v uint8) byte { return "0123456789abcdef"[v&0xF] }
