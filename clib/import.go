//go:build gorxe_clib

package main

/*
#include "clib.h"
*/
import "C"

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// cmdFile identifies the file behind a context's cmd_fd (a memfd of its own): a context and
// those imported from a dup of its cmd_fd share it, and with it their objects' handles.
type cmdFile struct{ dev, ino uint64 }

func cmdFileOf(fd C.int) (cmdFile, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(fd), &st); err != nil {
		return cmdFile{}, err
	}
	return cmdFile{dev: uint64(st.Dev), ino: st.Ino}, nil
}

// sameFile reports whether two contexts share their command file.
func sameFile(a, b *C.struct_ibv_context) bool {
	fa, err := cmdFileOf(a.cmd_fd)
	if err != nil {
		return false
	}
	fb, err := cmdFileOf(b.cmd_fd)
	return err == nil && fa == fb
}

// gx_import_device returns the device of the context whose cmd_fd fd duplicates. A context of
// another process cannot be imported (its objects live in that process's gorxe): EOPNOTSUPP,
// said on stderr; an fd that is no context's is EINVAL.
//
//export gx_import_device
func gx_import_device(fd C.int, dev **C.struct_ibv_device) (rc C.int) {
	defer catch("import_device", &rc)
	f, err := cmdFileOf(fd)
	if err != nil {
		return errnoOf(err)
	}
	ctxMu.Lock()
	for c, dc := range contexts {
		if g, err := cmdFileOf(c.cmd_fd); err == nil && g == f {
			*dev = dc.entry.c
			ctxMu.Unlock()
			return 0
		}
	}
	ctxMu.Unlock()
	if target, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(fd))); err == nil &&
		strings.HasPrefix(target, "/memfd:"+C.GX_CONTEXT_FILE) {
		warn("import_device: fd %d is the cmd_fd of a context of another process; "+
			"a context can be imported only in the process that opened it", fd)
		return C.int(syscall.EOPNOTSUPP)
	}
	return C.int(syscall.EINVAL)
}

// gx_import_pd makes pd (its context and handle set) a second handle on the PD of that handle
// in the context's command file.
//
//export gx_import_pd
func gx_import_pd(pd *C.struct_ibv_pd) (rc C.int) {
	defer catch("import_pd", &rc)
	objects.mu.Lock()
	defer objects.mu.Unlock()
	for c, p := range objects.pds {
		if c.handle == pd.handle && sameFile(c.context, pd.context) {
			objects.pds[pd] = p
			return 0
		}
	}
	return C.int(syscall.EINVAL)
}

//export gx_unimport_pd
func gx_unimport_pd(pd *C.struct_ibv_pd) (rc C.int) {
	defer catch("unimport_pd", &rc)
	return forget(objects.pds, pd)
}

// gx_import_mr makes mr (its context, PD and handle set) a second handle on the MR of that
// handle in the PD's command file, with its address, length and keys; the MR must belong to
// the PD given.
//
//export gx_import_mr
func gx_import_mr(mr *C.struct_ibv_mr) (rc C.int) {
	defer catch("import_mr", &rc)
	objects.mu.Lock()
	defer objects.mu.Unlock()
	pd := objects.pds[mr.pd]
	if pd == nil {
		return C.int(errBadObject)
	}
	for c, m := range objects.mrs {
		if c.handle == mr.handle && sameFile(c.context, mr.context) {
			if m.PD() != pd {
				return C.int(syscall.EINVAL)
			}
			objects.mrs[mr] = m
			mr.addr, mr.length = c.addr, c.length
			mr.lkey, mr.rkey = C.uint32_t(m.LKey()), C.uint32_t(m.RKey())
			return 0
		}
	}
	return C.int(syscall.EINVAL)
}

//export gx_unimport_mr
func gx_unimport_mr(mr *C.struct_ibv_mr) (rc C.int) {
	defer catch("unimport_mr", &rc)
	return forget(objects.mrs, mr)
}

// forget drops an imported handle without touching the object behind it.
func forget[K comparable, V any](m map[K]V, k K) C.int {
	objects.mu.Lock()
	defer objects.mu.Unlock()
	if _, ok := m[k]; !ok {
		return C.int(errBadObject)
	}
	delete(m, k)
	return 0
}
