package stack

import (
	"runtime"
	"time"
)

// The receive goroutine's looks at an empty socket while it polls outside latency mode
// (Config.ReceivePoll) are spaced: receivePollGap after the last read with data, twice that
// after the next empty look, and so on up to maxReceivePollGap. A look that finds nothing is a
// system call that takes the socket's receive queue lock, which the peer's send, delivering into
// that queue from the other core, then waits for; made back to back they were nearly all the
// system calls of a streaming server (15 of 17 per 64 KiB WRITE). Spaced by 2 µs they were about
// a third as many, and growing the gap to 8 µs halves them again, with the streams' rates where
// they were (docs/performance.md); a gap of 16 µs cost the 64-byte message rate 5-10%. A datagram
// that arrives during a gap waits at most the gap, which a stream does not notice, as the socket
// holds it; latency mode, whose receive goroutine polls for the latency, looks back to back.
const (
	receivePollGap    = 2 * time.Microsecond
	maxReceivePollGap = 8 * time.Microsecond
)

// pollGap is the least time from a look that found the socket empty to the next, when empty
// looks before it in the same poll found it empty too.
func pollGap(empty int) time.Duration {
	gap := receivePollGap
	for ; empty > 0 && gap < maxReceivePollGap; empty-- {
		gap *= 2
	}
	return gap
}

// pollPause comes between two looks at an empty socket, empty being the number of earlier looks
// of the poll that found it empty: it yields the processor to the goroutines the last read
// readied, then, outside latency mode, waits out the rest of pollGap in user space, where waiting
// costs the kernel nothing.
func (r *Stack) pollPause(empty int) {
	if r.latency {
		runtime.Gosched()
		return
	}
	end := time.Now().Add(pollGap(empty))
	runtime.Gosched()
	for time.Now().Before(end) {
	}
}
