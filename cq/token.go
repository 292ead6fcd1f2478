package cq

import "sync/atomic"

// Freed counts the slots of one work queue (a send queue, a receive queue or an SRQ) that their
// completions gave back by being polled. The queue refuses a post while its posted work requests
// minus Freed fill it, so a work request keeps its slot until its completion has left the CQ, as
// on hardware, where max_send_wr and max_recv_wr bound the work requests outstanding, completion
// included. Then a QP can have no more unpolled completions than its queues are deep, and a CQ
// with at least the sum of the depths of the queues that complete into it cannot overrun. (Kernel
// rxe frees a slot when the completion is generated, and rounds CQs up so that an overrun is
// unlikely; gorxe follows hardware, which makes it impossible.)
type Freed struct{ n atomic.Uint64 }

// Load returns how many slots were freed so far.
func (f *Freed) Load() uint64 { return f.n.Load() }

// Add frees n slots at once, for work requests that leave without a completion to poll (a reset
// queue, a completion the CQ refused).
func (f *Freed) Add(n uint64) { f.n.Add(n) }

// Token frees n slots of f when the completion it travels with is polled.
func (f *Freed) Token(n uint64) Token { return Token{f: f, n: n} }

// Token travels with a completion and frees its work queue's slots when the completion is polled.
// The zero Token frees nothing (a completion that held no slot, such as a work request flushed
// as soon as it was posted).
type Token struct {
	f *Freed
	n uint64
}
