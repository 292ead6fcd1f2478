//go:build gorxe_clib

package main

/*
#include <stddef.h>
#include "clib.h"

enum {
	gx_off_head = offsetof(struct gx_ring_header, head),
	gx_off_notify = offsetof(struct gx_ring_header, notify),
	gx_off_overrun = offsetof(struct gx_ring_header, overrun),
	gx_off_status = offsetof(struct gx_ring_wc, status),
	gx_off_vendor_err = offsetof(struct gx_ring_wc, vendor_err),
	gx_off_qp_num = offsetof(struct gx_ring_wc, qp_num),
	gx_off_wc_flags = offsetof(struct gx_ring_wc, wc_flags),
	gx_off_pkey_index = offsetof(struct gx_ring_wc, pkey_index),
	gx_off_dlid_path_bits = offsetof(struct gx_ring_wc, dlid_path_bits),
	gx_off_slots = offsetof(struct gx_ring_entry, slots),
	gx_off_dropped = offsetof(struct gx_ring_entry, dropped),
	gx_size_entry = sizeof(struct gx_ring_entry),
};
*/
import "C"

import (
	"unsafe"

	"github.com/gorxe/gorxe"
)

// The C mirror of gorxe's CQ ring (clib.h) must lay its fields out as Go does: each line fails
// to compile when an offset differs (a constant index out of range, or a uintptr constant below
// zero).
var (
	ringHdr   gorxe.CQRingHeader
	ringEntry gorxe.CQRingEntry
	_         = [1]struct{}{}[unsafe.Offsetof(ringHdr.Head)-C.gx_off_head]
	_         = [1]struct{}{}[unsafe.Offsetof(ringHdr.Notify)-C.gx_off_notify]
	_         = [1]struct{}{}[unsafe.Offsetof(ringHdr.Overrun)-C.gx_off_overrun]
	_         = [1]struct{}{}[unsafe.Offsetof(ringEntry.WC.Status)-C.gx_off_status]
	_         = [1]struct{}{}[unsafe.Offsetof(ringEntry.WC.VendorErr)-C.gx_off_vendor_err]
	_         = [1]struct{}{}[unsafe.Offsetof(ringEntry.WC.QPNum)-C.gx_off_qp_num]
	_         = [1]struct{}{}[unsafe.Offsetof(ringEntry.WC.WCFlags)-C.gx_off_wc_flags]
	_         = [1]struct{}{}[unsafe.Offsetof(ringEntry.WC.PKeyIndex)-C.gx_off_pkey_index]
	_         = [1]struct{}{}[unsafe.Offsetof(ringEntry.WC.DLIDPathBits)-C.gx_off_dlid_path_bits]
	_         = [1]struct{}{}[unsafe.Offsetof(ringEntry.Slots)-C.gx_off_slots]
	_         = [1]struct{}{}[unsafe.Offsetof(ringEntry.Flags)-C.gx_off_dropped]
	_         = [1]struct{}{}[unsafe.Sizeof(ringEntry)-C.gx_size_entry]
	_         = [1]struct{}{}[uintptr(gorxe.MaxCQE)-C.GX_MAX_CQE]
)

// ringOf is the ring C allocated for a CQ of n entries: memory outside Go's heap, which the
// engine writes and ring.c's poll_cq reads.
func ringOf(hdr *C.struct_gx_ring_header, ents *C.struct_gx_ring_entry, n C.int) gorxe.CQRing {
	return gorxe.CQRing{
		Header:  (*gorxe.CQRingHeader)(unsafe.Pointer(hdr)),
		Entries: unsafe.Slice((*gorxe.CQRingEntry)(unsafe.Pointer(ents)), int(n)),
	}
}
