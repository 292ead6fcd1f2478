package main

import (
	"sync/atomic"
	"time"
)

// A thread of the program that returns from a call into Go keeps the processor, parked in the
// state of a system call, while it polls in C; a goroutine readied meanwhile (the receive
// goroutine, a worker woken by a timer, an event writer) waits until the runtime's monitor takes
// the processor back, and the monitor, finding nothing to do for a while, checks only every
// 10 ms. ib_send_lat showed exactly that: a 10 ms round trip now and then. So a poll that found
// nothing gives the processor away at most once per yieldInterval, which bounds such a wait to
// about that, for two thread switches each time (about 1% of a core).
const yieldInterval = time.Millisecond

// lastYield is when an empty poll last gave the processor away, in ns since procsEpoch.
var lastYield atomic.Int64

// yieldDue reports whether an empty poll at now (ns since procsEpoch) gives the processor away:
// the first poll at least yieldInterval after the last one that did. Of concurrent pollers, one
// claims the turn.
func yieldDue(now int64) bool {
	last := lastYield.Load()
	return now-last >= int64(yieldInterval) && lastYield.CompareAndSwap(last, now)
}
