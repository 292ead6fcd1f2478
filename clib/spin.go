package main

import (
	"time"

	"github.com/gorxe/gorxe"
)

// spinPoll calls poll until it reports something or spin has passed since the first call, at
// least once, and reports whether it found anything.
func spinPoll(poll func() bool, spin time.Duration) bool {
	if poll() {
		return true
	}
	if spin <= 0 {
		return false
	}
	end := time.Since(procsEpoch) + spin
	for time.Since(procsEpoch) < end {
		if poll() {
			return true
		}
	}
	return false
}

// ringHolds reports whether a CQ's ring has completions the program has not polled, or overran
// (poll_cq then reports the error), as ring.c's poll_ring sees it before it takes its lock.
func ringHolds(h *gorxe.CQRingHeader) bool {
	return h.Tail.Load() != h.Head.Load() || h.Overrun.Load() != 0
}
