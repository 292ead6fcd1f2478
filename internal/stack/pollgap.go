package stack

import (
	"runtime"
	"time"
)

// receivePollGap is the least time between two looks at an empty socket by the receive goroutine
// while it polls outside latency mode (Config.ReceivePoll). A look that finds nothing is a system
// call that takes the socket's receive queue lock, which the peer's send, delivering into that
// queue from the other core, then waits for; made back to back they were nearly all the system
// calls of a streaming server (15 of 17 per 64 KiB WRITE). Spaced by 2 µs they are about a third
// as many and the streams' rates stay where they were (docs/performance.md). A datagram that
// arrives during a gap waits at most the gap, which a stream does not notice, as the socket holds
// it; latency mode, whose receive goroutine polls for the latency, looks back to back.
const receivePollGap = 2 * time.Microsecond

// pollPause comes between two looks at an empty socket: it yields the processor to the
// goroutines the last read readied, then, outside latency mode, waits out the rest of
// receivePollGap in user space, where waiting costs the kernel nothing.
func (r *Stack) pollPause() {
	if r.latency {
		runtime.Gosched()
		return
	}
	end := time.Now().Add(receivePollGap)
	runtime.Gosched()
	for time.Now().Before(end) {
	}
}
