package packet

import (
	"encoding/binary"
	"hash/crc32"
	"net/netip"
	"sync"
)

// Why this file exists
//
// The ICRC of an IPv4 RoCE packet covers the IP Identification field and
// the DF/MF flags. Kernel rxe sends a different, incrementing ID in every
// packet, but a receiver reading from a UDP socket is never told the ID (nor
// the flags), so it cannot recompute the ICRC directly. It can still check
// the ICRC, by asking whether some ID and flags make it match:
//
// CRC-32 is affine over GF(2): for messages of equal length,
// crc(m ^ d) = crc(m) ^ L(d), with L linear (the CRC register run from zero
// over d, without the initial and final inversions). Let m0 be the packet
// with ID and flags zero and x the 18 unknown bits (16 of ID, DF, MF). Then
//
//	icrc = crc(m0) ^ L(d(x)) = crc(m0) ^ Z^T(B x)
//
// where B x is the register after the three bytes holding ID and flags, run
// from zero (B is a fixed 32x18 matrix), and Z^T moves a register through the
// T zero bytes that follow them to the end of the message. Z is
// multiplication by x^8 modulo the CRC polynomial, so it is invertible, and
//
//	B x = Z^-T (icrc ^ crc(m0)) = s
//
// has a solution iff s lies in the 18-dimensional column space of B. B is
// fixed, so a 32x32 matrix E with E B = [I; 0] is computed once; E s gives x
// in its low 18 bits and must be zero in its high 14 bits. The 18 bits lie
// within a 32-bit window, where CRC-32 detects every error pattern, so B has
// full rank and a solution is unique. Z^-T is a multiplication by x^(-8T),
// taken from two 256-entry tables (T = hi*256 + lo).
//
// Cost: one CRC pass over the packet, one GF(2^32) multiplication (two past
// MTU 4096) and four table lookups. What is given up: 18 of the 32 check bits
// are spent on the unknown fields, so a corrupted packet slips through with
// probability about 2^-14 instead of 2^-32. Receivers that can see the IP
// header (raw sockets, captures) should use Envelope.VerifyICRC instead.
//
// The base message m0 is taken with DF set and the ID the receiver expects
// (0 unless told otherwise) rather than all zero, as the affine relation holds
// around any base. DF and ID 0 is what gorxe (and any sender on an unconnected
// socket with path-MTU discovery) puts on a lone datagram, and a segmented
// send numbers its segments from there, so for those packets s is zero and
// nothing needs solving. A packet is accepted exactly as with any other base:
// the (ID, flags) with s = 0 is one of the candidates the solver would find.

// VerifyICRCIPv4AnyID checks the ICRC of pkt, a RoCE packet (BTH to ICRC)
// received over IPv4 from src by dst, when the sender's IPv4 Identification
// and DF/MF flags are unknown. It returns nil if some ID and flags make the
// ICRC match, together with the (unique) ID and flags that do; otherwise
// ErrBadICRC, or an error of [Envelope.ICRC]. src and dst must be IPv4 or
// IPv4-mapped addresses. It does not allocate.
func VerifyICRCIPv4AnyID(src, dst netip.AddrPort, pkt []byte) (id uint16, flags IPv4Flags, err error) {
	return VerifyICRCIPv4AnyIDNear(src, dst, pkt, 0)
}

// VerifyICRCIPv4AnyIDNear is [VerifyICRCIPv4AnyID] for a receiver that expects
// the ID near: it takes the base message with that ID and DF, so a packet sent
// with them costs one CRC pass and nothing more, and any other the solver. It
// accepts exactly the packets VerifyICRCIPv4AnyID accepts, whatever near is.
// The segments of one UDP_SEGMENT send carry consecutive IDs, so the reader of
// a coalesced run expects one more than the ID of the datagram before.
func VerifyICRCIPv4AnyIDNear(src, dst netip.AddrPort, pkt []byte, near uint16) (id uint16, flags IPv4Flags, err error) {
	e := Envelope{Src: src, Dst: dst}
	if v6, err := e.is6(); err != nil || v6 {
		return 0, 0, ErrAddressFamily
	}
	c0, err := e.icrc(pkt, near, IPv4DontFragment)
	if err != nil {
		return 0, 0, err
	}
	s := c0 ^ binary.LittleEndian.Uint32(pkt[len(pkt)-ICRCSize:])
	if s == 0 {
		return near, IPv4DontFragment, nil
	}
	sv := anyIDSolver()
	t := len(pkt) + anyIDTrailerBias
	if t < len(sv.unshift) {
		s = gfMul(s, sv.unshift[t])
	} else {
		s = gfMul(gfMul(s, sv.unshiftLo[t&0xFF]), sv.unshiftHi[t>>8&0xFF])
	}
	x := sv.solve[0][byte(s)] ^ sv.solve[1][byte(s>>8)] ^ sv.solve[2][byte(s>>16)] ^ sv.solve[3][byte(s>>24)]
	if x>>anyIDUnknowns != 0 {
		return 0, 0, ErrBadICRC
	}
	x ^= uint32(near) | anyIDBase // x held the difference from the base's ID and flags
	return uint16(x), IPv4Flags(x >> 16), nil
}

const (
	// anyIDUnknowns is the number of unknown bits: the ID, then MF and DF
	// (bit 16 + IPv4MoreFragments-1, bit 16 + IPv4DontFragment-1).
	anyIDUnknowns = 18

	// anyIDBase is the flags of the base message, as unknown bits; its ID is
	// the one expected (VerifyICRCIPv4AnyIDNear).
	anyIDBase = uint32(IPv4DontFragment) << 16

	// anyIDTrailerBias turns a packet length into T, the number of bytes the
	// CRC runs over after the IPv4 flags byte: the message is 0xFF x 8, the
	// 20-byte IP header, the 8-byte UDP header and the packet without its
	// ICRC; the flags byte is byte 8+6, so T = 36 + len(pkt) - 4 - 15.
	anyIDTrailerBias = 8 + IPv4HeaderSize + UDPHeaderSize - ICRCSize - (8 + 6 + 1)
)

// anyIDDirect is the number of T values for which x^(-8T) is tabulated whole: every packet up
// to MTU 4096 with its headers. The multiplication is a bit-serial loop, and a received GSO
// segment of a gorxe peer (IPv4 ID k > 0) always needs it, so one instead of two halves what the
// solver costs such a packet (it was 13% of a 64-byte SEND receiver's CPU time).
const anyIDDirect = 4352

// anyIDTables holds the precomputed parts of VerifyICRCIPv4AnyID.
type anyIDTables struct {
	unshift   [anyIDDirect]uint32 // x^(-8t), t < anyIDDirect
	unshiftLo [256]uint32         // x^(-8t), t = 0..255
	unshiftHi [256]uint32         // x^(-8*256*t)
	solve     [4][256]uint32      // E applied to each byte of s
}

var anyIDSolver = sync.OnceValue(newAnyIDTables)

// anyIDColumn returns column j of B: the CRC register, run from zero, after
// the IPv4 header bytes 4..6 (ID and flags) with only unknown bit j set.
func anyIDColumn(j int) uint32 {
	x := uint32(1) << j
	d := [3]byte{byte(x >> 8), byte(x), byte(x>>16) << 5}
	return ^updateSmall(^uint32(0), d[:])
}

func newAnyIDTables() *anyIDTables {
	t := new(anyIDTables)

	// Z^-T tables.
	invX8 := gfOne
	for range 8 {
		invX8 = gfMul(invX8, gfInvX)
	}
	t.unshiftLo[0] = gfOne
	for i := 1; i < 256; i++ {
		t.unshiftLo[i] = gfMul(t.unshiftLo[i-1], invX8)
	}
	step := gfMul(t.unshiftLo[255], invX8) // x^(-8*256)
	t.unshiftHi[0] = gfOne
	for i := 1; i < 256; i++ {
		t.unshiftHi[i] = gfMul(t.unshiftHi[i-1], step)
	}
	t.unshift[0] = gfOne
	for i := 1; i < anyIDDirect; i++ {
		t.unshift[i] = gfMul(t.unshift[i-1], invX8)
	}

	// M = [B | unit vectors completing a basis]; E = M^-1.
	var m [32]uint32
	var basis [32]uint32 // echelon form, to test independence
	n := 0
	add := func(v uint32) {
		r := v
		for p := 31; p >= 0 && r != 0; p-- {
			if r>>p&1 == 0 {
				continue
			}
			if basis[p] == 0 {
				basis[p] = r
				m[n] = v
				n++
				return
			}
			r ^= basis[p]
		}
	}
	for j := range anyIDUnknowns {
		add(anyIDColumn(j))
	}
	for i := 0; i < 32 && n < 32; i++ {
		add(1 << i)
	}
	inv := gf2Invert(m)
	for k := range 4 {
		for v := range 256 {
			var acc uint32
			for b := range 8 {
				if v>>b&1 != 0 {
					acc ^= inv[8*k+b]
				}
			}
			t.solve[k][v] = acc
		}
	}
	return t
}

// gf2Invert inverts the 32x32 GF(2) matrix given by its columns (column j is
// m[j], bit i of it is row i) and returns the columns of the inverse. It
// reduces M to the identity with column operations, applying each to an
// identity matrix C, so that M C = I. A singular M leaves garbage, which the
// tests rule out.
func gf2Invert(m [32]uint32) [32]uint32 {
	var c [32]uint32
	for j := range c {
		c[j] = 1 << j
	}
	for r := range 32 {
		p := r
		for p < 32 && m[p]>>r&1 == 0 {
			p++
		}
		if p == 32 {
			continue
		}
		m[p], m[r] = m[r], m[p]
		c[p], c[r] = c[r], c[p]
		for k := range 32 {
			if k != r && m[k]>>r&1 != 0 {
				m[k] ^= m[r]
				c[k] ^= c[r]
			}
		}
	}
	return c
}

// Arithmetic in GF(2)[x] modulo the CRC-32 polynomial, in the bit-reflected
// form the CRC register uses: bit 31 is the coefficient of x^0, bit 0 that of
// x^31. Running the register over one zero byte is multiplication by x^8.
const (
	gfOne  uint32 = 1 << 31
	gfPoly uint32 = crc32.IEEE // x^32 reduced, reflected
	// gfInvX is x^-1: the element y with y*x = 1. Multiplying by x shifts
	// right and folds the x^32 bit back as gfPoly, so y = (1 ^ gfPoly)<<1 | 1.
	gfInvX uint32 = (gfOne^gfPoly)<<1 | 1
)

// gfMul returns a*b modulo the CRC-32 polynomial.
func gfMul(a, b uint32) uint32 {
	var p uint32
	for a != 0 {
		p ^= b & -(a >> 31) // a's lowest remaining power
		a <<= 1
		b = b>>1 ^ gfPoly&-(b&1) // b *= x
	}
	return p
}
