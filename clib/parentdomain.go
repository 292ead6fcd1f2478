//go:build gorxe_clib

package main

/*
#include "clib.h"
*/
import "C"

import "syscall"

// parentDomains maps each parent domain to the PD it was made from, which it holds: that PD
// cannot be deallocated (EBUSY) while a parent domain stands for it, as in rdma-core. Guarded by
// objects.mu.
var parentDomains = map[*C.struct_ibv_pd]*C.struct_ibv_pd{}

// gx_parent_domain makes pd (its context set) stand for parent, a PD of the same device: the
// verbs that take a PD find parent's gorxe PD under pd, and pd has parent's handle.
//
//export gx_parent_domain
func gx_parent_domain(pd, parent *C.struct_ibv_pd) (rc C.int) {
	defer catch("alloc_parent_domain", &rc)
	objects.mu.Lock()
	defer objects.mu.Unlock()
	p, ok := objects.pds[parent]
	if !ok {
		return C.int(errBadObject)
	}
	if pc, c := contextOf(parent.context), contextOf(pd.context); pc == nil || c == nil || pc.entry != c.entry {
		return C.int(syscall.EINVAL)
	}
	if _, nested := parentDomains[parent]; nested {
		return C.int(syscall.EINVAL) // a parent domain is made from a PD, not another parent domain
	}
	objects.pds[pd] = p
	parentDomains[pd] = parent
	pd.handle = parent.handle
	return 0
}

// deallocParentDomain frees pd when it is a parent domain (ok), leaving its PD; a PD that parent
// domains stand for is EBUSY. Called with objects.mu held.
func deallocParentDomain(pd *C.struct_ibv_pd) (rc C.int, ok bool) {
	if _, isParent := parentDomains[pd]; isParent {
		delete(parentDomains, pd)
		delete(objects.pds, pd)
		return 0, true
	}
	for _, of := range parentDomains {
		if of == pd {
			return C.int(syscall.EBUSY), true
		}
	}
	return 0, false
}
