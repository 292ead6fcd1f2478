package mr

import "math/rand/v2"

// KeyIndex returns the table index of an lkey or rkey.
func KeyIndex(key uint32) uint32 { return key >> 8 }

// KeyVariant returns the 8-bit variant of a key, the part that changes on every re-registration.
func KeyVariant(key uint32) uint8 { return uint8(key) }

// MakeKey combines an index and a variant into a key.
func MakeKey(index uint32, variant uint8) uint32 { return index<<8 | uint32(variant) }

// IsMW reports whether key names a memory window, decided by its index range alone.
func IsMW(key uint32) bool {
	i := KeyIndex(key)
	return i >= MinMWIndex && i <= MaxMWIndex
}

// IsMR reports whether key names a memory region, decided by its index range alone.
func IsMR(key uint32) bool {
	i := KeyIndex(key)
	return i >= MinMRIndex && i <= MaxMRIndex
}

// IncKey returns key with its variant incremented, keeping the index: the usual way to choose the new
// key of a fast registration or a window bind (libibverbs ibv_inc_rkey).
func IncKey(key uint32) uint32 { return key&^0xff | (key+1)&0xff }

// nextVariant picks a random variant that differs from prev, so the previous key of an index never
// comes back immediately.
func nextVariant(prev uint8) uint8 { return prev + 1 + uint8(rand.N(255)) }
