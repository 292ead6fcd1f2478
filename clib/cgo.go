//go:build gorxe_clib

package main

/*
#cgo CFLAGS: -Wall -Wno-unused-parameter
#include <stdlib.h>
#include "clib.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"syscall"

	"github.com/gorxe/gorxe"
)

// errnoOf maps an error of gorxe's API onto the errno libibverbs reports for it.
func errnoOf(err error) C.int {
	if err != nil && logFailures {
		fmt.Fprintln(os.Stderr, err)
	}
	var en syscall.Errno
	switch {
	case err == nil:
		return 0
	case errors.As(err, &en):
		return C.int(en)
	case errors.Is(err, gorxe.ErrNotSupported):
		return C.int(syscall.EOPNOTSUPP)
	case errors.Is(err, gorxe.ErrInUse), errors.Is(err, gorxe.ErrPDInUse), errors.Is(err, gorxe.ErrMWBound),
		errors.Is(err, gorxe.ErrEventsNotAcked), errors.Is(err, gorxe.ErrBufferInUse):
		return C.int(syscall.EBUSY)
	case errors.Is(err, gorxe.ErrQueueFull), errors.Is(err, gorxe.ErrTableFull), errors.Is(err, gorxe.ErrQPTableFull):
		return C.int(syscall.ENOMEM)
	case errors.Is(err, gorxe.ErrDeviceClosed):
		return C.int(syscall.ENODEV)
	}
	return C.int(syscall.EINVAL)
}

// logFailures prints on stderr why each failing verb failed (errno alone rarely says), when
// VERBS_LOG_LEVEL, rdma-core's knob for its providers' messages, asks for debug output (4).
var logFailures = func() bool {
	l, err := strconv.Atoi(os.Getenv("VERBS_LOG_LEVEL"))
	return err == nil && l >= 4
}()

// catch ends every exported function: a panic must never unwind into the program that loaded
// the library, so it is reported on stderr and the call fails with EIO.
func catch(op string, rc *C.int) {
	if r := recover(); r != nil {
		fmt.Fprintf(os.Stderr, "gorxe: %s: internal error: %v\n%s", op, r, debug.Stack())
		*rc = C.int(syscall.EIO)
	}
}

// warn prints a one-line message for the program's user, as libibverbs' providers do on stderr.
func warn(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "gorxe: "+format+"\n", args...)
}

// warnDevice prints why device (a gorxe_ name) failed, on one line.
func warnDevice(device string, err error) {
	fmt.Fprintf(os.Stderr, "%s: %v\n", device, err)
}
