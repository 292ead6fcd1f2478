package packet

// PSN is a 24-bit InfiniBand packet sequence number. PSNs wrap from 0xFFFFFF
// to 0, so they are compared with serial-number arithmetic (RFC 1982 style):
// a PSN is "before" another if it lies less than half the space (2^23)
// behind it. All methods keep the value within 24 bits; raw integer
// comparisons of PSNs are always wrong near the wrap and should not be used.
type PSN uint32

// PSNMask masks a value to the 24 bits of a PSN.
const PSNMask = 0xFFFFFF

// Add returns p advanced by n, modulo 2^24.
func (p PSN) Add(n uint32) PSN { return PSN((uint32(p) + n) & PSNMask) }

// Sub returns p moved back by n, modulo 2^24.
func (p PSN) Sub(n uint32) PSN { return PSN((uint32(p) - n) & PSNMask) }

// Diff returns the signed distance p - q in the range [-2^23, 2^23). Shifting
// the 24-bit difference into the top of an int32 makes the sign bit the
// 24th bit, which is exactly serial-number arithmetic.
func (p PSN) Diff(q PSN) int32 { return int32((uint32(p)-uint32(q))<<8) >> 8 }

// LessThan reports whether p comes before q.
func (p PSN) LessThan(q PSN) bool { return p.Diff(q) < 0 }

// LessThanEq reports whether p comes before q or equals it.
func (p PSN) LessThanEq(q PSN) bool { return p.Diff(q) <= 0 }

// InWindow reports whether p lies in the size PSNs starting at first, that is
// first <= p < first+size modulo 2^24. A size of 0 is an empty window;
// sizes above 2^23 are clamped to 2^23, beyond which order is undefined.
func (p PSN) InWindow(first PSN, size uint32) bool {
	if size > 1<<23 {
		size = 1 << 23
	}
	return (uint32(p)-uint32(first))&PSNMask < size
}

// Valid reports whether p fits in 24 bits.
func (p PSN) Valid() bool { return p <= PSNMask }
