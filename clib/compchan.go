//go:build gorxe_clib

package main

/*
#include "clib.h"
*/
import "C"

import (
	"context"
	"encoding/binary"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gorxe/gorxe"
)

// Completion channels. Each event is an 8-byte record in the channel's pipe, the CQ's handle,
// which ibv_get_cq_event reads in C (verbs.c, compwait.c) and finds among the channel's CQs. The
// channel's goroutine writes the records; a thread waiting in ibv_get_cq_event that ran the
// network itself writes those of the events it produced at once (gx_poll_channel), with no
// goroutine to wake in between. Both take the events with TakeEvent, which leaves their
// acknowledgement to C: what holds ibv_destroy_cq back is the events the program read and has not
// acknowledged, which C counts, as libibverbs does; a destroyed CQ's records still in the pipe are
// skipped.

// chanState is the Go side of a completion channel: the channel and its pipe's write end.
type chanState struct {
	c    *gorxe.CompChannel
	w    int
	size int // the pipe's capacity in bytes
}

// gx_create_comp_channel creates the channel and the goroutine that turns its completion events
// into records on the pipe's write end w.
//
//export gx_create_comp_channel
func gx_create_comp_channel(ch *C.struct_ibv_comp_channel, w C.int) (rc C.int) {
	defer catch("create_comp_channel", &rc)
	d, rc := deviceOf(ch.context)
	if rc != 0 {
		return rc
	}
	size, err := unix.FcntlInt(uintptr(w), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		return errnoOf(err)
	}
	c, err := d.CreateCompChannel()
	if err != nil {
		return errnoOf(err)
	}
	s := &chanState{c: c, w: int(w), size: size}
	objects.mu.Lock()
	objects.chans[ch] = s
	objects.mu.Unlock()
	go s.forward()
	return 0
}

// forward writes the channel's events to the pipe until the channel is destroyed or its device
// closed, then closes the write end (the program then reads EOF).
func (s *chanState) forward() {
	defer syscall.Close(s.w)
	for {
		cq, err := s.c.TakeEvent(context.Background())
		if err != nil || !s.put(cq) {
			return
		}
	}
}

// put writes the record of an event of cq to the pipe, unless the CQ is gone.
func (s *chanState) put(cq *gorxe.CQ) bool {
	h, ok := objects.cqHandle(cq)
	if !ok {
		return true
	}
	var rec [8]byte
	binary.NativeEndian.PutUint64(rec[:], uint64(h))
	return writeAll(s.w, rec[:]) == nil
}

// deliver writes the events queued in the channel to the pipe while it has room for them, on the
// calling thread, which must not block here: it is the thread that reads the pipe. The events it
// leaves are the channel's goroutine's.
func (s *chanState) deliver() {
	for {
		queued, err := unix.IoctlGetInt(s.w, unix.TIOCINQ) // FIONREAD: the bytes the pipe holds
		if err != nil || s.size-queued < 8 {
			return
		}
		cq, err := s.c.TakeEvent(doneContext)
		if err != nil || !s.put(cq) {
			return
		}
	}
}

// doneContext makes TakeEvent return an event already queued, or fail at once.
var doneContext = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

func (s *chanState) destroy() error { return s.c.Destroy() }

//export gx_destroy_comp_channel
func gx_destroy_comp_channel(ch *C.struct_ibv_comp_channel) (rc C.int) {
	defer catch("destroy_comp_channel", &rc)
	return release(&objects, objects.chans, ch, (*chanState).destroy, nil)
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

// gx_poll_channel runs what the channel's device has received on the calling thread
// (runNetwork), a program's waiting for a completion event that a datagram woke, and writes the
// channel's events that produced; it reports whether it read any. The events go out once the whole read is handled, so
// that the completions of all its packets (a reply and the ACK beside it) are in their CQs when
// the program wakes, as they are on rxe, whose kernel handles a packet before the program runs.
//
//export gx_poll_channel
func gx_poll_channel(ch *C.struct_ibv_comp_channel) (got C.int) {
	defer catch("get_cq_event", &got)
	d, rc := deviceOf(ch.context)
	if rc != 0 || !runNetwork(d, nil, true, 0) {
		return 0
	}
	if s := lookup(&objects, objects.chans, ch); s != nil {
		s.deliver()
	}
	return 1
}
