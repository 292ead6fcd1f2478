//go:build gorxe_clib

package main

/*
#include <stdbool.h>
#include "clib.h"
*/
import "C"

import (
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gorxe/gorxe"
)

// qpFeed is the Feeder of a QP the library created: it hands the QP's engine the work requests
// post.c queued in the QP's post rings, and after each engine call sets the QP's bell, which
// tells post.c's posters whether to start the engine themselves (gx_kick).
type qpFeed struct {
	q *C.struct_gx_qp_ex

	mu sync.Mutex // Feed's taking of entries against discard's (a verb's)
	// sendHead and recvHead count the ring entries taken so far; stored under mu, loaded
	// without it, so that a Feed with nothing new (most packets) and Settled take no lock.
	sendHead, recvHead atomic.Uint64
	posts              // the scratch the entries are converted into, under mu
}

// Pending reports whether the rings hold entries Feed has not taken.
func (f *qpFeed) Pending() bool {
	return tail(&f.q.sring) != f.sendHead.Load() || tail(&f.q.rring) != f.recvHead.Load()
}

// tail loads a post ring's tail, which C stores after writing the entry.
func tail(r *C.struct_gx_post_ring) uint64 {
	return (*atomic.Uint64)(unsafe.Pointer(&r.tail)).Load()
}

// postEntry returns the address of a post ring's entry at position i.
func postEntry(r *C.struct_gx_post_ring, i uint64) unsafe.Pointer {
	return unsafe.Add(unsafe.Pointer(r.ents), uintptr(i%uint64(r.n))*uintptr(r.stride))
}

// Feed converts the ring entries written since the last call. post.c checked each as PostSend
// would; an address handle destroyed since (the one check it cannot make) leaves its request
// out, as the QP would refuse it.
func (f *qpFeed) Feed() ([]gorxe.SendWR, []gorxe.RecvWR) {
	if !f.Pending() {
		return nil, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.send, f.recv, f.sges = f.send[:0], f.recv[:0], f.sges[:0]
	end := tail(&f.q.rring)
	f.recvEntries(&f.q.rring, f.recvHead.Load(), end)
	f.recvHead.Store(end)
	head, end := f.sendHead.Load(), tail(&f.q.sring)
	for ; head != end; head++ {
		if wr, ok := f.sendWR((*C.struct_gx_send_wr)(postEntry(&f.q.sring, head))); ok {
			f.send = append(f.send, wr)
		}
	}
	f.sendHead.Store(head)
	return f.send, f.recv
}

// recvEntries appends the receive ring entries from head to end to p.recv.
func (p *posts) recvEntries(r *C.struct_gx_post_ring, head, end uint64) {
	for ; head != end; head++ {
		e := (*C.struct_gx_recv_ent)(postEntry(r, head))
		sges := (*C.struct_ibv_sge)(unsafe.Add(unsafe.Pointer(e), unsafe.Sizeof(*e)))
		p.recv = append(p.recv, gorxe.RecvWR{ID: uint64(e.wr_id), SGList: p.sgesOf(sges, C.int(e.num_sge))})
	}
}

// Settled sets the bell for the posters (an idle engine needs a kick for a send; a QP in error,
// for a receive) and reports whether they queued work after the last Feed. The bell is stored
// before the tails are loaded, and posters store a tail before they load the bell, so a post is
// either seen here or sees the bell (both atomics are sequentially consistent).
func (f *qpFeed) Settled(busy, failed bool) bool {
	var bell uint32
	if !busy {
		bell |= C.GX_BELL_SEND
	}
	if failed {
		bell |= C.GX_BELL_RECV
	}
	(*atomic.Uint32)(unsafe.Pointer(&f.q.bell)).Store(bell)
	return f.Pending()
}

// discard drops what the rings hold: a move to RESET discards posted work.
func (f *qpFeed) discard() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sendHead.Store(tail(&f.q.sring))
	f.recvHead.Store(tail(&f.q.rring))
}

// srqFeed is the SRQFeeder of an SRQ the library created: it hands the SRQ the work requests
// post.c queued in the SRQ's ring. The SRQ calls Feed under its lock, so the scratch and the
// count of entries taken (g.fed, which posters load to see room in the ring) need no lock of
// their own.
type srqFeed struct {
	g *C.struct_gx_srq
	posts
}

// Feed converts the ring entries written since the last call; post.c checked each.
func (f *srqFeed) Feed() []gorxe.RecvWR {
	fed := (*atomic.Uint64)(unsafe.Pointer(&f.g.fed))
	head, end := fed.Load(), tail(&f.g.ring)
	if head == end {
		return nil
	}
	f.recv, f.sges = f.recv[:0], f.sges[:0]
	f.recvEntries(&f.g.ring, head, end)
	fed.Store(end)
	return f.recv
}

// gx_kick starts the engine of a QP whose bell a post found set.
//
//export gx_kick
func gx_kick(q *C.struct_ibv_qp) {
	var rc C.int
	defer catch("post_send", &rc)
	if s := lookup(&objects, objects.qps, q); s != nil {
		s.qp.Kick()
	}
}

// pollSpin is how long one call into Go for a program's empty poll_cq goes on looking at the
// network when the program polls the CQ again at once (ring.c's TIGHT_NS): such a program would
// only have called again, and one call for many looks saves it the runtime's entry and exit on
// each. ib_send_lat on the library, three interleaved rounds: typical half round trip 13.0-13.7
// -> 12.7-13.2 us. The budget bounds how long a look the program did not ask for holds its
// thread, and so how late its own checks between polls (a deadline, a signal's flag) run, and
// it spreads the cost of a call over about twenty looks.
const pollSpin = 20 * time.Microsecond

// gx_poll_network runs what the network holds on the calling thread (runNetwork), for a poll
// that found the CQ's ring, hdr, empty; mayYield says whether this poll checks if the thread is
// due to give the processor away, spin whether it goes on looking for pollSpin (ring.c says
// when), until the network or the ring has something.
//
//export gx_poll_network
func gx_poll_network(cq *C.struct_ibv_cq, hdr *C.struct_gx_ring_header, mayYield, spin C.bool) C.int {
	var rc C.int
	defer catch("poll_cq", &rc)
	var budget time.Duration
	if spin {
		budget = pollSpin
	}
	ring := (*gorxe.CQRingHeader)(unsafe.Pointer(hdr))
	if s := lookup(&objects, objects.cqs, cq); s != nil && runNetwork(s.dev, ring, bool(mayYield), budget) {
		return 1
	}
	return 0
}
