package mr

import "unsafe"

// unsafeBytes views a []uint64 as bytes, giving tests 8-byte aligned memory.
func unsafeBytes(w []uint64) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), len(w)*8)
}
