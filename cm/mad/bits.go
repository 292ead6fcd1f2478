package mad

// CM messages pack 24-bit fields into the upper three bytes of a 32-bit word
// and share the low byte with another field, so writers touch exactly three
// bytes.

func uint24(b []byte) uint32 {
	_ = b[2]
	return uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2])
}

func putUint24(b []byte, v uint32) {
	_ = b[2]
	b[0], b[1], b[2] = byte(v>>16), byte(v>>8), byte(v)
}

// QPNMask masks a value to 24 bits: QPNs, EECNs, PSNs and ECE vendor IDs in CM
// messages.
const QPNMask = 0xFFFFFF

func bit(v bool, mask byte) byte {
	if v {
		return mask
	}
	return 0
}

// putArea copies src into the fixed-size area dst and zeroes the rest, so a
// re-encoded buffer never leaks stale bytes.
func putArea(dst, src []byte) error {
	if len(src) > len(dst) {
		return ErrPrivateDataTooLong
	}
	n := copy(dst, src)
	clear(dst[n:])
	return nil
}
