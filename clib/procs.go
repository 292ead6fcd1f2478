//go:build gorxe_clib

package main

import (
	"os"
	"runtime"
	"time"

	"github.com/gorxe/gorxe"
)

// The Go runtime behind the library gets one processor unless the program's environment sets
// GOMAXPROCS. A C program's threads poll in C and call into Go for the engine's work (the first
// post to an idle QP, an empty poll that runs the network), and with a second processor the
// runtime wakes a second thread for each goroutine those calls ready, which then competes with
// the program (and on a small machine with its peer) for the cores, a context switch or more per
// message. With one, the engine's work runs on the program's own threads, as rxe's runs in the
// system calls and soft interrupts of the CPU the program is on. Measured as two processes over
// loopback on two cores: 64-byte ib_send_bw 0.29 -> 0.45 M messages/s, ib_write_bw 64 KiB
// 970 -> 1000 MB/s, ib_send_lat typical 43 -> 16.5 µs. A program whose many threads post to many
// QPs at once may do better with GOMAXPROCS set to its cores: their calls then run in parallel.
func init() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}

// yieldProcessor lets goroutines waiting for the processor run, unless they were looked for
// less than yieldInterval ago (yieldDue).
func yieldProcessor() {
	if yieldDue(int64(time.Since(procsEpoch))) && othersRunnable() {
		runtime.Gosched()
	}
}

// runNetwork runs what d's network holds on a thread of the program, which holds the runtime's
// processor while it does, and reports whether it read anything or ring, when not nil, holds
// completions; with a spin budget it goes on looking until one of the two or the budget is spent
// (spinPoll). The ring is looked at because what fills it may run elsewhere: another thread's
// poll that read the datagram first, the receive goroutine, a timer's retry. Finding nothing,
// it may give goroutines waiting for the processor their turn (yieldProcessor), when mayYield:
// the receive goroutine may hold the socket's poll lock, so that a thread that called again and
// again would find the datagram it polls for taken and never let it go.
func runNetwork(d *gorxe.Device, ring *gorxe.CQRingHeader, mayYield bool, spin time.Duration) bool {
	look := func() bool { return d.PollNetwork() || ring != nil && ringHolds(ring) }
	if spinPoll(look, spin) {
		return true
	}
	if mayYield {
		yieldProcessor()
	}
	return false
}
