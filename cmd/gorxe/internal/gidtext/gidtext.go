package gidtext

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"

	"github.com/gorxe/gorxe"
)

// WireLen is the length of a GID in the pingpong tools' address message: 32 hex digits.
const WireLen = 32

// ErrBadGID: a wire GID that is not 32 hex digits.
var ErrBadGID = errors.New("malformed GID")

// Format prints a GID as the C tools do with inet_ntop(AF_INET6, ...) in glibc: the longest
// run of two or more zero groups (the first of equal runs) becomes "::", and an IPv4-mapped
// (::ffff:a.b.c.d) or IPv4-compatible (::a.b.c.d) GID ends in dotted decimal. It differs from
// netip.Addr.String only for the IPv4-compatible form.
func Format(g gorxe.GID) string {
	var w [8]uint16
	for i := range w {
		w[i] = binary.BigEndian.Uint16(g[2*i:])
	}
	bestBase, bestLen := -1, 0
	for i := 0; i < 8; {
		if w[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && w[j] == 0 {
			j++
		}
		if j-i > bestLen {
			bestBase, bestLen = i, j-i
		}
		i = j
	}
	if bestLen < 2 {
		bestBase, bestLen = -1, 0
	}
	b := make([]byte, 0, 46)
	for i := 0; i < 8; i++ {
		if bestBase >= 0 && i >= bestBase && i < bestBase+bestLen {
			if i == bestBase {
				b = append(b, ':')
			}
			continue
		}
		if i != 0 {
			b = append(b, ':')
		}
		if i == 6 && bestBase == 0 && (bestLen == 6 || (bestLen == 5 && w[5] == 0xffff)) {
			b = fmt.Appendf(b, "%d.%d.%d.%d", g[12], g[13], g[14], g[15])
			break
		}
		b = strconv.AppendUint(b, uint64(w[i]), 16)
	}
	if bestBase >= 0 && bestBase+bestLen == 8 {
		b = append(b, ':')
	}
	return string(b)
}

// AppendWire appends the GID as the pingpong tools send it: the 16 raw bytes in order as 32
// lowercase hex digits.
func AppendWire(dst []byte, g gorxe.GID) []byte {
	return hex.AppendEncode(dst, g[:])
}

// ParseWire parses 32 hex digits (either case) into a GID.
func ParseWire(s []byte) (gorxe.GID, error) {
	var g gorxe.GID
	if len(s) != WireLen {
		return g, fmt.Errorf("%w: %d characters, want %d", ErrBadGID, len(s), WireLen)
	}
	if _, err := hex.Decode(g[:], s); err != nil {
		return gorxe.GID{}, fmt.Errorf("%w: %q is not hexadecimal", ErrBadGID, s)
	}
	return g, nil
}
