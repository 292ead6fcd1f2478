package main

import (
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// A thread of the program that returns from a call into Go keeps the processor, parked in the
// state of a system call, while it polls in C; a goroutine readied meanwhile (the receive
// goroutine, a worker woken by a timer, an event writer) waits until the runtime's monitor takes
// the processor back, and the monitor, finding nothing to do for a while, checks only every
// 10 ms. ib_send_lat showed exactly that: a 10 ms round trip now and then. So a poll that found
// nothing looks at most once per yieldInterval for goroutines waiting to run and gives them the
// processor, which bounds such a wait to about that. Giving it away costs the polling thread two
// thread switches, tens of µs here, so it is given only to goroutines that wait for it: given
// every millisecond regardless, it took 8% of an empty-polling thread's time.
const yieldInterval = time.Millisecond

// procsEpoch anchors the readings of the monotonic clock: time.Since reads only that clock, where
// time.Now reads the wall clock too, and each reading is a measurable part of an empty poll.
var procsEpoch = time.Now()

// lastYield is when an empty poll last looked for waiting goroutines, in ns since procsEpoch.
var lastYield atomic.Int64

// yieldDue reports whether an empty poll at now (ns since procsEpoch) looks for waiting
// goroutines: the first poll at least yieldInterval after the last one that did. Of concurrent
// pollers, one claims the turn.
func yieldDue(now int64) bool {
	last := lastYield.Load()
	return now-last >= int64(yieldInterval) && lastYield.CompareAndSwap(last, now)
}

// runnable is the runtime's count of goroutines ready to run and waiting for a processor,
// read by one poller at a time (yieldDue's turn, and the lock for the rare overlap).
var runnable = struct {
	sync.Mutex
	s [1]metrics.Sample
}{s: [1]metrics.Sample{{Name: "/sched/goroutines/runnable:goroutines"}}}

// othersRunnable reports whether goroutines are ready to run and wait for a processor (a
// runtime that cannot tell says yes). It costs about 0.2 µs. Those waiting only on a timer or on
// the network's readiness count once the runtime's monitor has found them, within about 10 ms.
func othersRunnable() bool {
	runnable.Lock()
	defer runnable.Unlock()
	metrics.Read(runnable.s[:])
	v := runnable.s[0].Value
	return v.Kind() != metrics.KindUint64 || v.Uint64() > 0
}
