package cq

import "sync/atomic"

// Ring is a CQ's storage: a header with the producer's and the consumer's positions and the
// entries, in memory its consumer can read. A CQ made by New keeps it in Go memory and is polled
// with Poll. A CQ made by NewRing uses memory its caller provides and is polled by a consumer that
// never calls into the CQ, from another runtime or language: the C library's poll_cq reads
// completions straight from the memory the engine writes them to, as rxe's provider reads the CQ
// ring the kernel fills, so polling costs no call into Go.
//
// The protocol, for a consumer outside Go: Push writes Entries[Tail % len(Entries)] and then
// stores Tail+1 (release); the consumer loads Tail (acquire), reads the entries from Head up to it
// and then stores the new Head (release). Both positions count from 0 and never wrap (2^64
// completions); the ring is full when Tail-Head == len(Entries). The layout of RingHeader and RingEntry is fixed (no Go
// pointers, natural alignment), so a C struct with the same fields in the same order reads it.
type Ring struct {
	Header  *RingHeader
	Entries []RingEntry
}

// RingHeader holds a Ring's positions and its notification arm.
type RingHeader struct {
	Tail atomic.Uint64 // completions pushed, stored after the entry is written
	_    [56]byte      // producer and consumer positions on separate cache lines
	Head atomic.Uint64 // completions polled, stored by the consumer
	_    [56]byte
	// Notify is ibv_req_notify_cq's arm (RingNotifyNext or RingNotifySolicited, 0 when disarmed).
	// The consumer stores it to arm; the Push whose completion fires the event swaps it back to 0.
	Notify atomic.Uint32
	// Overrun is 1 once a completion found the ring full: the CQ is in the error state.
	Overrun atomic.Uint32
}

// The values of RingHeader.Notify.
const (
	RingNotifyNone      = 0
	RingNotifyNext      = 1 // the next completion of any kind fires the event
	RingNotifySolicited = 2 // the next solicited or unsuccessful completion fires it
)

// RingEntry is one completion in a Ring.
type RingEntry struct {
	WC WC
	// Slots is how many work-queue slots polling this completion frees: the work request's own,
	// plus those of the unsignaled send work requests it retires. A CQ made by NewRing gives the
	// slots back to the queue when it pushes the completion, since it never sees the poll; its
	// consumer keeps each queue's count of outstanding work requests itself and adds Slots back
	// when it polls, which keeps the rule that a work request holds its slot until its completion
	// is polled (see Freed).
	Slots uint32
	// Flags is the consumer's: the C library marks entries it drops (those of a QP moved to
	// RESET). Push writes it 0.
	Flags uint32
}

// len returns how many completions wait in the ring.
func (h *RingHeader) len() int { return int(h.Tail.Load() - h.Head.Load()) }

// arm sets the notification as ReqNotify describes.
func (h *RingHeader) arm(solicitedOnly bool) {
	if !solicitedOnly {
		h.Notify.Store(RingNotifyNext)
		return
	}
	h.Notify.CompareAndSwap(RingNotifyNone, RingNotifySolicited)
}

// fire reports whether a completion with status st, from a solicited message or not, fires the
// armed event, and disarms it if so.
func (h *RingHeader) fire(solicited bool, st Status) bool {
	n := h.Notify.Load()
	if n == RingNotifyNone || (n == RingNotifySolicited && !solicited && st == WCSuccess) {
		return false
	}
	return h.Notify.CompareAndSwap(n, RingNotifyNone)
}
