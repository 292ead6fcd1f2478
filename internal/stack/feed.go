package stack

import "github.com/gorxe/gorxe/qp"

// A Feeder hands a QP's engine work its program queued outside Go, such as the C library's post
// rings, so that a post needs no call into Go while the engine is going to run anyway: the
// worker asks the feeder for new work before each engine call, and tells it after each call
// whether another call is coming on its own.
type Feeder interface {
	// Feed returns the work requests queued since the last call, oldest first; the slices are
	// the feeder's and are read before the next call.
	Feed() (send []qp.SendWR, recv []qp.RecvWR)
	// Pending reports whether Feed has work to return. It is asked before each engine call,
	// so that a QP whose feeder holds nothing (most packets) takes no lock for it; it must not
	// block, and may report true spuriously.
	Pending() bool
	// Settled follows each engine call. busy says another engine call is coming without a Kick
	// (work in flight, a timer set, a run queued); failed says the QP is in the error state,
	// where posted work completes at once. The feeder tells its posters whether to Kick, then
	// reports whether work arrived meanwhile, which the worker then feeds at once.
	Settled(busy, failed bool) (more bool)
}

// feeder holds a QP's Feeder; nil means the QP is only posted to through PostSend.
type feeder struct{ f Feeder }

// SetFeeder makes f feed the QP's engine from now on (nil stops it).
func (h *QP) SetFeeder(f Feeder) {
	if f == nil {
		h.feeder.Store(nil)
		return
	}
	h.feeder.Store(&feeder{f: f})
}

// Kick asks for an engine call now, as a post to an idle QP does: on the caller's goroutine when
// the worker is idle, else by the worker. The feeder is asked for work first.
func (h *QP) Kick() { h.notify(true) }

// feed posts the feeder's new work to the QP. A work request the QP refuses is dropped: its
// feeder checked it as PostSend would, except for what changed since (a move to RESET, which
// discards posted work anyway).
func (h *QP) feed() {
	if fd := h.feeder.Load(); fd == nil || !fd.f.Pending() {
		return
	}
	h.feedMu.Lock()
	h.feedLocked()
	h.feedMu.Unlock()
}

// feedLocked is feed with h.feedMu held, which keeps the order of the feeder's work and of
// PostSend's.
func (h *QP) feedLocked() {
	fd := h.feeder.Load()
	if fd == nil {
		return
	}
	send, recv := fd.f.Feed()
	for len(recv) > 0 {
		err := h.q.PostRecv(recv)
		recv = afterFailed(recv, err)
	}
	for len(send) > 0 {
		_, err := h.q.PostSend(send)
		send = afterFailed(send, err)
	}
}

// afterFailed returns the work requests after the one a post failed at (none when it did not).
func afterFailed[W any](wrs []W, err error) []W {
	if pe, ok := err.(*qp.PostError); ok && pe.Index < len(wrs) {
		return wrs[pe.Index+1:]
	}
	return nil
}

// settle tells the feeder how the engine call left the QP, and runs the QP again if work arrived
// in between.
func (h *QP) settle() {
	fd := h.feeder.Load()
	if fd == nil {
		return
	}
	busy := !h.deadline.IsZero() || h.queued.Load()
	if fd.f.Settled(busy, h.q.State() == qp.StateErr) {
		h.notify(false)
	}
}
