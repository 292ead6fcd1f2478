package perftest

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gorxe/gorxe"
)

// spinFor is how long a latency test's waiter polls, yielding in between, before it sleeps on
// the completion channel. perftest busy-polls without end; a Go waiter yields between polls, so
// that the device's goroutines run on its processor, and in latency mode its empty polls read the
// network themselves. It still sleeps after a while so that a peer descheduled for long (a loaded
// machine) gets the core back.
//
// The spin must be long next to a round trip, not only longer than one. With a spin of 256
// polls (~190 µs) the two processes of a latency test on two cores fell, in about half the runs,
// into a state where both ran on one core, taking turns of one spin each: every sleep wakes the
// Go runtime's monitor thread (sysmon), which then polls every 20 µs for a millisecond or more,
// so with both processes sleeping every 200 µs the other core looked busy with the two monitors,
// the scheduler placed each woken process beside the other, and 0.1% to a few percent of the
// round trips took 200-500 µs. Spinning 2 ms, the processes sleep too rarely to keep that up
// (docs/performance.md, "64-byte half round trip").
//
// A bandwidth test's waiter does not spin: it waits for a batch of completions (every CQ
// moderation messages on the sender, a poll batch on the receiver), long enough that one
// goroutine wake-up per wait costs less than the yields of a spin. Measured on two cores with
// send_bw -s 64, the spin took 1.7 µs of CPU time per message of both processes (~30%) and
// bought no message rate.
const spinFor = 2 * time.Millisecond

// waiter waits for completions on a CQ, or for a byte of memory to change, within the limits of
// a run: its context, an optional end time, and the stall limit.
type waiter struct {
	ctx    context.Context
	events bool          // -e: sleep on the completion channel instead of polling
	spin   time.Duration // how long to poll, yielding in between, before sleeping (none with events)
	stall  time.Duration

	// sleep ends a sleep on the completion channel: a child of ctx that timer cancels. Both are
	// reused from one sleep to the next until the timer fires: a bandwidth receiver sleeps once
	// per poll batch, and a context.WithDeadline per sleep cost it ~5% of its CPU time in
	// allocations and garbage collection.
	sleep  context.Context
	cancel context.CancelFunc
	timer  *time.Timer
}

// until returns a context that ends at limit or with the run's context.
func (w *waiter) until(limit time.Time) context.Context {
	if w.sleep == nil || w.sleep.Err() != nil {
		w.close()
		w.sleep, w.cancel = context.WithCancel(w.ctx)
		w.timer = time.AfterFunc(time.Until(limit), w.cancel)
		return w.sleep
	}
	// A timer that fires meanwhile only ends this sleep early; the caller goes round again.
	w.timer.Reset(time.Until(limit))
	return w.sleep
}

// close releases the sleep context and its timer.
func (w *waiter) close() {
	if w.timer != nil {
		w.timer.Stop()
		w.cancel()
		w.sleep, w.cancel, w.timer = nil, nil, nil
	}
}

// newWaiter returns the waiter of a run; a latency test spins before it sleeps.
func newWaiter(ctx context.Context, p *Params, stall time.Duration) *waiter {
	w := &waiter{ctx: ctx, events: p.Events, stall: stall}
	if !p.Events && p.Test.Kind == Lat {
		w.spin = spinFor
	}
	return w
}

// spinning reports whether a spin that has polled i times goes on, its start time kept in start
// (the zero time before the first call). The clock is read every spinCheck polls, since
// waitByte's look at a byte costs far less than a clock read, and never for a waiter that does
// not spin, whose every wait would pay it.
func (w *waiter) spinning(start *time.Time, i int) bool {
	switch {
	case w.spin == 0:
		return false
	case start.IsZero():
		*start = time.Now()
		return true
	}
	return i%spinCheck != 0 || time.Since(*start) < w.spin
}

// spinCheck is how many polls of a spin go by between its looks at the clock.
const spinCheck = 64

// errEnd: the end time of a timed run passed while waiting.
var errEnd = fmt.Errorf("end of the timed run")

// poll returns at least one completion of cq's CQs, waiting for it if needed, unless end (if not zero)
// passes first (errEnd), nothing completes for the stall limit (errStalled), or the run is
// interrupted.
func (w *waiter) poll(cq *cqSet, ch *gorxe.CompChannel, wcs []gorxe.WC, end time.Time) (int, error) {
	if n := cq.Poll(wcs); n > 0 {
		return n, nil
	}
	var start time.Time
	for i := 1; w.spinning(&start, i); i++ {
		runtime.Gosched()
		if n := cq.Poll(wcs); n > 0 {
			return n, nil
		}
	}
	deadline := time.Now().Add(w.stall)
	for {
		if err := w.ctx.Err(); err != nil {
			return 0, err
		}
		now := time.Now()
		if !end.IsZero() && !now.Before(end) {
			return 0, errEnd
		}
		if !now.Before(deadline) {
			return 0, errStalled
		}
		if err := cq.ReqNotify(false); err != nil {
			return 0, err
		}
		// A completion may have arrived before the CQ was armed.
		if n := cq.Poll(wcs); n > 0 {
			return n, nil
		}
		limit := deadline
		if !end.IsZero() && end.Before(limit) {
			limit = end
		}
		c, err := ch.GetEvent(w.until(limit))
		if err == nil {
			c.AckEvents(1)
		}
		if n := cq.Poll(wcs); n > 0 {
			return n, nil
		}
	}
}

// byteAt reads mem[i] atomically: the byte is written by the transport, on another goroutine,
// while a WRITE latency test watches it.
func byteAt(mem []byte, i int) byte {
	word := (*uint32)(unsafe.Pointer(&mem[i&^3]))
	v := atomic.LoadUint32(word)
	return (*[4]byte)(unsafe.Pointer(&v))[i&3]
}

// waitByte waits until mem[i] holds want (perftest's spin on the last byte of the receive buffer
// in ib_write_lat), under the same limits as poll. sendErr reports an error completion of the
// waiting side's own WRITEs meanwhile, which means the peer will never answer.
//
// The spin polls the send CQ too: in latency mode an empty poll reads the network on this
// goroutine, which is how the peer's WRITE lands while this one spins. A bare yield would not
// do: with one P, a goroutine that only yields keeps the scheduler from polling the network until
// its spin ends, and the sleeps after it wait on timers the netpoller rounds up to a millisecond.
func (w *waiter) waitByte(mem []byte, i int, want byte, end time.Time, sendErr func() error) error {
	var start time.Time
	for k := 1; w.spinning(&start, k); k++ {
		if byteAt(mem, i) == want {
			return nil
		}
		if err := sendErr(); err != nil {
			return err
		}
		runtime.Gosched()
	}
	deadline := time.Now().Add(w.stall)
	nap := time.Microsecond
	for byteAt(mem, i) != want {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		now := time.Now()
		if !end.IsZero() && !now.Before(end) {
			return errEnd
		}
		if !now.Before(deadline) {
			return errStalled
		}
		if err := sendErr(); err != nil {
			return err
		}
		time.Sleep(nap)
		nap = min(2*nap, 100*time.Microsecond)
	}
	return nil
}

// wcError is a failed completion (perftest's NOTIFY_COMP_ERROR_SEND/RECV).
func wcError(side string, wc *gorxe.WC, scnt, ccnt int) error {
	return &CompletionError{Side: side, WC: *wc, Scnt: scnt, Ccnt: ccnt}
}
