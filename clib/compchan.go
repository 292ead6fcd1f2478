//go:build gorxe_clib

package main

/*
#include "clib.h"
*/
import "C"

import (
	"context"
	"encoding/binary"
	"errors"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gorxe/gorxe"
)

// Completion channels. Each event is an 8-byte record, the CQ's C address, in the channel's
// pipe, which ibv_get_cq_event reads in C (verbs.c, compwait.c). The engine that fires an event
// writes its record itself (gorxe's CreateCompChannelFunc), so that a program blocked on the
// pipe wakes with no goroutine hand-off before it. The write end does not block: an event the pipe
// has no room for (a program that arms its CQs again and again without reading the events) waits
// in the channel for the channel's goroutine, which writes it once there is room and closes the
// write end when the channel is destroyed or its device closed (the program then reads EOF).

// gx_create_comp_channel creates the channel, whose events go to the pipe's write end w.
//
//export gx_create_comp_channel
func gx_create_comp_channel(ch *C.struct_ibv_comp_channel, w C.int) (rc C.int) {
	defer catch("create_comp_channel", &rc)
	d, rc := deviceOf(ch.context)
	if rc != 0 {
		return rc
	}
	if err := syscall.SetNonblock(int(w), true); err != nil {
		return errnoOf(err)
	}
	c, err := d.CreateCompChannelFunc(func(cq *gorxe.CQ) bool { return putEvent(int(w), cq, false) })
	if err != nil {
		return errnoOf(err)
	}
	objects.mu.Lock()
	objects.chans[ch] = c
	objects.mu.Unlock()
	go forwardCompEvents(c, int(w))
	return 0
}

// putEvent writes cq's record to the pipe's write end w. Without wait it reports false when the
// pipe is full (a write of 8 bytes to a pipe is whole or nothing); with wait it waits for room.
func putEvent(w int, cq *gorxe.CQ, wait bool) bool {
	var rec [8]byte
	binary.NativeEndian.PutUint64(rec[:], uint64(uintptr(objects.cqPtr(cq))))
	for {
		_, err := syscall.Write(w, rec[:])
		switch {
		case err == nil:
			return true
		case errors.Is(err, syscall.EINTR):
		case errors.Is(err, syscall.EAGAIN) && wait:
			if _, err := unix.Poll([]unix.PollFd{{Fd: int32(w), Events: unix.POLLOUT}}, -1); err != nil && !errors.Is(err, syscall.EINTR) {
				return false
			}
		default:
			return false // the program closed the read end, or the pipe is full
		}
	}
}

// forwardCompEvents writes the events the pipe had no room for, and closes the write end once the
// channel ends.
func forwardCompEvents(c *gorxe.CompChannel, w int) {
	defer syscall.Close(w)
	for {
		cq, err := c.GetEvent(context.Background())
		if err != nil {
			return // the channel was destroyed, or its device closed
		}
		if !putEvent(w, cq, true) {
			return
		}
	}
}

//export gx_destroy_comp_channel
func gx_destroy_comp_channel(ch *C.struct_ibv_comp_channel) (rc C.int) {
	defer catch("destroy_comp_channel", &rc)
	return release(&objects, objects.chans, ch, (*gorxe.CompChannel).Destroy, nil)
}

// gx_channel_fds stores in fds, up to max, the descriptors of the sockets the channel's device
// receives on, and returns how many it stored: none once the device is closed.
//
//export gx_channel_fds
func gx_channel_fds(ch *C.struct_ibv_comp_channel, fds *C.int, max C.int) (n C.int) {
	defer catch("get_cq_event", &n)
	d, rc := deviceOf(ch.context)
	if rc != 0 || max <= 0 {
		return 0
	}
	var buf [16]int
	out := unsafe.Slice(fds, int(max))
	for _, fd := range d.NetworkFDs(buf[:0]) {
		if int(n) == len(out) {
			break
		}
		out[n] = C.int(fd)
		n++
	}
	return n
}

// gx_poll_channel runs what the channel's device has received, on the calling thread (a program
// waiting for a completion event, which a datagram woke); it reports whether it read any.
//
//export gx_poll_channel
func gx_poll_channel(ch *C.struct_ibv_comp_channel) (got C.int) {
	defer catch("get_cq_event", &got)
	if d, rc := deviceOf(ch.context); rc == 0 && d.PollNetwork() {
		return 1
	}
	return 0
}
