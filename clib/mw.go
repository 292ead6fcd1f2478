//go:build gorxe_clib

package main

/*
#include "clib.h"
*/
import "C"

import (
	"math"
	"syscall"

	"github.com/gorxe/gorxe"
)

// gx_alloc_mw allocates the window of mw's type on mw->pd, and sets its rkey and handle.
//
//export gx_alloc_mw
func gx_alloc_mw(mw *C.struct_ibv_mw) (rc C.int) {
	defer catch("alloc_mw", &rc)
	p := lookup(&objects, objects.pds, mw.pd)
	if p == nil {
		return C.int(errBadObject)
	}
	if uint32(mw._type) > math.MaxUint8 {
		return C.int(syscall.EINVAL) // no such type; gorxe's MWType would truncate it
	}
	w, err := p.AllocMW(gorxe.MWType(mw._type))
	if err != nil {
		return errnoOf(err)
	}
	objects.mu.Lock()
	defer objects.mu.Unlock()
	objects.mws[mw] = w
	mw.rkey = C.uint32_t(w.RKey())
	mw.handle = objects.nextHandle()
	return 0
}

//export gx_dealloc_mw
func gx_dealloc_mw(mw *C.struct_ibv_mw) (rc C.int) {
	defer catch("dealloc_mw", &rc)
	return release(&objects, objects.mws, mw, (*gorxe.MW).Dealloc, nil)
}
