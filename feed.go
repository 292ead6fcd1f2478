package gorxe

import "github.com/gorxe/gorxe/qp"

// A Feeder supplies a QP with work its program queues outside Go, for a poster that should not
// call into gorxe for each post: the C library's ibv_post_send and ibv_post_recv write work
// requests into rings in C memory, as rxe's provider writes the rings the kernel reads, and the
// QP takes them from its Feeder each time its engine runs anyway (a packet arrived, a timer
// fired). Only when the QP would otherwise stay idle does the poster call Kick.
type Feeder interface {
	// Feed returns the work requests queued since the last call, oldest first. It runs on the
	// QP's worker before each engine call; the slices stay the feeder's and are read before
	// its next call. A work request the QP refuses as PostSend or PostRecv would is dropped, so
	// the feeder checks them first.
	Feed() (send []SendWR, recv []RecvWR)
	// Pending reports whether Feed has work to return. It is asked before each engine call,
	// so that a QP whose feeder holds nothing (most packets) takes no lock for it; it must not
	// block, and may report true spuriously.
	Pending() bool
	// Settled runs after each engine call: busy says another engine call comes without a Kick
	// (work in flight, a timer set), failed that the QP is in the error state, where posts
	// complete at once. The feeder tells its posters whether to Kick, then reports whether work
	// was queued meanwhile, which is then fed at once.
	Settled(busy, failed bool) (more bool)
}

// SetFeeder makes f supply the QP's work from now on, beside PostSend and PostRecv (nil stops
// it).
func (q *QP) SetFeeder(f Feeder) { q.h.SetFeeder(f) }

// Kick runs the QP's engine, asking its Feeder for work first: on the caller's goroutine when
// the QP's worker is idle, as a post to an idle QP does, else soon on the worker.
func (q *QP) Kick() {
	if !q.dev.closed.Load() {
		q.h.Kick()
	}
}

// An SRQFeeder supplies a shared receive queue with receive work requests its program queues
// outside Go, as the C library's ibv_post_srq_recv does. The SRQ takes them whenever something
// reads it (a message arriving on one of its QPs, a post, Len, Query, Modify), so they count,
// for the limit event too, as posted ones do. Feed runs under the SRQ's lock, one call at a time;
// its slice stays the feeder's and is read before the next call; a work request the SRQ refuses
// as PostRecv would is dropped, so the feeder checks them first.
type SRQFeeder = qp.SRQFeeder

// SetFeeder makes f supply the SRQ's work requests from now on, beside PostRecv (nil stops it).
func (s *SRQ) SetFeeder(f SRQFeeder) { s.s.SetFeeder(f) }
