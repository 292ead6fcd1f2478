package stack

import (
	"errors"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorxe/gorxe/clock"
	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/netio"
	"github.com/gorxe/gorxe/qp"
	"github.com/gorxe/gorxe/transport"
)

// worker runs the engines of the QPs mapped to it, one call at a time. Engines run under the
// worker's run lock, on whichever goroutine holds it: the receive goroutine for the packets it
// has just read, a poster for the work it has just posted, a verb for its control request, or
// the worker's own goroutine, which takes over what the others found the lock busy for and
// fires the timers. Running work where it arises instead of handing it to another goroutine
// saves a goroutine wake-up per hand-off, which on a small machine costs as much as the
// protocol work itself. An engine never sees two callers at once, and Modify is ordered with the
// packets around it.
type worker struct {
	r    *Stack
	idx  int
	kick chan struct{} // capacity 1: queued work the lock holder may not see, or a timer
	quit chan struct{} // closed by Runtime.Close

	mu       sync.Mutex
	pending  []*QP      // QPs that asked to be run; guarded by mu
	inbox    []*rxBatch // received batches not yet handled; guarded by mu
	draining bool       // the run lock holder will look at pending and inbox again; guarded by mu

	timerDue atomic.Bool

	// run is held while engines run; it guards everything below.
	run      sync.Mutex
	stopped  bool             // shut down by Runtime.Close: nothing runs any more
	own      map[*QP]struct{} // live QPs of this worker
	running  []*QP            // the pending list being worked on, swapped with pending
	batches  []*rxBatch       // the inbox being worked on, swapped with inbox
	stamp    uint64           // counts received batches, to find each QP's last packet in one
	timer    clock.Timer
	timerAt  time.Time
	dueAt    atomic.Int64     // timerAt in Unix nanoseconds (0: none), for runDue
	timers   clock.Queue[*QP] // QP deadlines; an entry that no longer matches its QP's deadline is stale
	out      transport.Output
	msgs     []netio.Message
	tx       netio.Sender // this worker's own: its sends share no scratch or lock with other workers'
	lastSend error
	budget   transport.SendBudget // this worker's share of the device's in-flight bound
	starved  []*QP                // QPs waiting for room in budget, oldest first
	polled   bool                 // the drain runs for a poll on the application's goroutine
	events   uint64               // cq.Events at the last wokeWaiter
	// The packets in out that received packets made were all from QPs that had answered the
	// last (replied), or not all (unreplied); see keepACKs.
	replied, unreplied bool
	// held counts the ACKs at the head of out.Packets that the last flush kept back. Written
	// under the run lock; runDue reads it without.
	held atomic.Int32
}

// maxDrainRounds bounds how often one drain goes back for work that arrived while it ran, so a
// goroutine that helped out (the receive goroutine, a poster) returns to its own job; the
// worker's goroutine takes over the rest.
const maxDrainRounds = 8

// maxInbox is the number of received batches a worker may have queued before the receive
// goroutine waits for the run lock instead of queuing more, which slows reading to the pace the
// engines keep (the kernel's socket buffer holds the rest).
const maxInbox = 64

// flushThreshold is the number of queued outgoing packets that makes a worker send before it
// handles the next packet, which bounds the buffers one drain can hold.
const flushThreshold = netio.IdealBatchSize

// yieldBeforeSend is the number of packets from which a send is long enough (several µs per
// datagram in the kernel) that the sender yields its processor before it (see flush); shorter
// ones, a lone ACK or a latency test's packet, go at once. It yields only if a goroutine may
// have been woken since the last such send (wokeWaiter).
const yieldBeforeSend = 8

func newWorker(r *Stack, idx int) *worker {
	w := &worker{r: r, idx: idx, kick: make(chan struct{}, 1), quit: make(chan struct{}), own: make(map[*QP]struct{}),
		tx: netio.NewSender(r.conn)}
	w.out.Alloc = getBuf
	// A network that sends datagrams in pieces lets payloads go out from registered memory: the
	// packets are sent within the drain that built them, under w.run, which Quiesce waits for.
	if vs, ok := r.conn.(netio.VectorSender); ok && vs.SendsVectors() {
		w.out.Views = true
	}
	w.initBudget(len(r.workers))
	return w
}

// wake makes the worker's goroutine drain the worker.
func (w *worker) wake() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// help drains the worker on the calling goroutine if nobody runs it, and otherwise wakes the
// worker's goroutine, which drains once the lock is free. In latency mode it waits for the lock
// instead: the holder's drain is shorter than a goroutine wake-up. polled tells the drain that it
// runs for a poll on the application's goroutine (see keepACKs).
func (w *worker) help(polled bool) {
	if w.r.latency {
		w.run.Lock()
	} else if !w.run.TryLock() {
		w.wake()
		return
	}
	w.polled = polled
	w.drain()
	w.polled = false
	w.run.Unlock()
}

// enqueue queues a batch of received packets for the worker; start then gets it handled.
func (w *worker) enqueue(b *rxBatch) {
	w.mu.Lock()
	w.inbox = append(w.inbox, b)
	w.mu.Unlock()
}

// start gets the worker's queued batches handled. With inline set the caller runs the worker
// itself if nobody does, as it also does when the worker is far behind; polled is help's.
func (w *worker) start(inline, polled bool) {
	w.mu.Lock()
	backlog, draining := len(w.inbox), w.draining
	w.mu.Unlock()
	switch {
	case backlog > maxInbox:
		w.run.Lock()
		w.drain()
		w.run.Unlock()
	case draining, backlog == 0: // a drain running, or done since the batch was queued, has it
	case inline:
		w.help(polled)
	default:
		w.wake()
	}
}

func (w *worker) loop() {
	defer w.r.wWG.Done()
	for {
		select {
		case <-w.kick:
			w.run.Lock()
			w.drain()
			w.run.Unlock()
		case <-w.quit:
			w.run.Lock()
			w.shutdown()
			w.run.Unlock()
			return
		}
	}
}

// do runs f under the worker's run lock, after the packets already delivered to the worker and
// before whatever f queued, and returns. It fails with ErrClosed once the worker has shut down; f
// then does not run.
//
// A verb (f) thus finds its QP as the packets that arrived before it left it, as on a NIC, which
// handles each packet as it arrives, long before a connection manager reacts to a later one. A
// peer that acknowledges a SEND and then disconnects sends the ACK first; when the DREQ, read
// in the same batch or a later one, makes the program destroy its QP at once (libfabric's rxm
// does), the SEND must complete rather than be flushed, so the ACK waiting in this worker's
// queue goes in before the destroy.
func (w *worker) do(f func()) error {
	w.run.Lock()
	defer w.run.Unlock()
	if w.stopped {
		return ErrClosed
	}
	w.drain() // sets w.out.Want for f too
	f()
	w.drain()
	return nil
}

// drain handles the received batches, the QPs that asked to be run and the expired timers, again
// as long as more arrives (up to maxDrainRounds rounds), then sends what the engines produced and
// re-arms the timer. The caller holds w.run.
func (w *worker) drain() {
	if w.stopped {
		return
	}
	w.out.Want = w.r.eventMask()
	now := w.r.clk.Now()
	for round := 0; ; round++ {
		w.mu.Lock()
		// A QP destroyed or moved to ERR by a verb (see do) may have made room in the budget.
		idle := len(w.inbox) == 0 && len(w.pending) == 0 && !w.timerDue.Load() && !w.admissible()
		if idle || round == maxDrainRounds {
			w.draining = false
			w.mu.Unlock()
			if !idle {
				w.wake()
			}
			break
		}
		w.draining = true
		w.batches, w.inbox = w.inbox, w.batches[:0]
		w.running, w.pending = w.pending, w.running[:0]
		w.mu.Unlock()
		now = w.r.clk.Now()
		for i, b := range w.batches {
			w.receive(b, now)
			w.batches[i] = nil
		}
		for i, h := range w.running {
			h.queued.Store(false)
			if !h.dead {
				w.runEngine(h, now)
			}
			w.running[i] = nil
		}
		if w.timerDue.Swap(false) {
			w.timerAt = time.Time{}
			w.dueAt.Store(0)
			w.expire(now)
		}
		w.admit(now)
	}
	w.flush()
	w.arm(now)
}

// receive hands each packet of b to its QP's engine, then recycles the buffers and the batch.
// The packets of one QP arrived together, so all but its last go in with ReceiveMore: the engine
// answers the burst with one ACK and sends what the burst's acknowledgements allow at once.
func (w *worker) receive(b *rxBatch, now time.Time) {
	w.stamp++
	for i := len(b.pkts) - 1; i >= 0; i-- {
		p := &b.pkts[i]
		p.more = p.qp.seen == w.stamp
		p.qp.seen = w.stamp
	}
	for i := range b.pkts {
		p := &b.pkts[i]
		if h := p.qp; !h.dead {
			h.feed()
			v, n := h.q.AttrVersion(), len(w.out.Packets)
			if p.more {
				h.eng.ReceiveMore(now, &p.parsed, p.from, &w.out)
			} else {
				h.eng.Receive(now, &p.parsed, p.from, &w.out)
			}
			w.noteAnswered(h, n)
			w.ran(h, v, n)
		}
		p.release()
	}
	putBatch(b)
}

// runEngine runs h's engine for whatever is due.
func (w *worker) runEngine(h *QP, now time.Time) {
	h.feed()
	v, n := h.q.AttrVersion(), len(w.out.Packets)
	h.eng.Run(now, &w.out)
	h.answered = h.answered || len(w.out.Packets) > n
	w.ran(h, v, n)
}

// ran does what follows every engine call: it counts the packets the engine produced (n were
// queued before the call), queues the QP to run again if the call changed the QP's state (the
// QP's attribute version was v before it: a QP that entered ERR has work to flush), records the
// engine's next deadline and sends when enough packets are queued.
func (w *worker) ran(h *QP, v uint64, n int) {
	if sent := len(w.out.Packets) - n; sent > 0 {
		h.eng.Counters().Add(counter.SentPkts, uint64(sent))
	}
	if h.q.AttrVersion() != v {
		h.notify(false)
	}
	if len(w.out.Events) != 0 {
		w.report(h)
	}
	w.track(h)
	h.settle()
	w.noteStarved(h)
	if len(w.out.Packets) >= flushThreshold {
		w.flush()
	}
}

// track records c's next deadline after an engine call.
func (w *worker) track(c *QP) {
	dl := c.eng.Deadline()
	if dl.Equal(c.deadline) {
		return
	}
	c.deadline = dl
	if !dl.IsZero() {
		w.timers.Push(dl, c)
	}
}

// expire runs every QP whose deadline is not after now.
func (w *worker) expire(now time.Time) {
	for {
		at, c, ok := w.timers.Peek()
		if !ok || at.After(now) {
			return
		}
		w.timers.Pop()
		if c.dead || !c.deadline.Equal(at) {
			continue // superseded entry
		}
		c.deadline = time.Time{}
		w.runEngine(c, now)
	}
}

// arm sets the worker's single timer to the earliest live deadline of its QPs, or sooner to send
// the ACKs the last flush kept back (maxACKHold).
func (w *worker) arm(now time.Time) {
	at := w.nextDeadline()
	if w.held.Load() > 0 {
		if send := now.Add(maxACKHold); at.IsZero() || send.Before(at) {
			at = send
		}
	}
	if at.IsZero() {
		if w.timer != nil && !w.timerAt.IsZero() {
			w.timer.Stop()
		}
		w.timerAt = time.Time{}
		w.dueAt.Store(0)
		return
	}
	if at.Equal(w.timerAt) {
		return
	}
	w.timerAt = at
	w.dueAt.Store(at.UnixNano())
	if w.timer == nil {
		w.timer = w.r.clk.AfterFunc(at.Sub(now), w.onTimer)
	} else {
		w.timer.Reset(at.Sub(now))
	}
}

// nextDeadline returns the earliest live deadline of the worker's QPs (zero if none), dropping
// the stale entries before it.
func (w *worker) nextDeadline() time.Time {
	for {
		t, c, ok := w.timers.Peek()
		if !ok {
			return time.Time{}
		}
		if !c.dead && c.deadline.Equal(t) {
			return t
		}
		w.timers.Pop() // superseded entry
	}
}

// runDue drains the worker on the calling goroutine if it has work due (a run asked for, a timer
// expired at now, ACKs kept back) and nobody runs it; it reports whether it did.
func (w *worker) runDue(now time.Time) bool {
	due := w.dueAt.Load()
	expired := due != 0 && now.UnixNano() >= due
	if !expired && len(w.kick) == 0 && w.held.Load() == 0 {
		return false
	}
	if !w.run.TryLock() {
		return false
	}
	if expired {
		w.timerDue.Store(true)
	}
	w.drain()
	w.run.Unlock()
	return true
}

// onTimer runs on the clock's goroutine: it only flags the expiry for the worker.
func (w *worker) onTimer() {
	w.timerDue.Store(true)
	w.wake()
}

// wokeWaiter reports whether a completion event was queued on a channel, by any worker, since
// its last call: only then may a goroutine wait for this processor. A yield costs the yielding
// thread a wake-up of another and often a move to another core: an RDMA READ responder, which
// sends the most and completes nothing, lost a fifth of its CPU time per MiB to them, and a C
// program's busy-polling thread, running the engines in a call into Go locked to it, two thread
// switches per yield (64 KiB ib_write_bw: 28 000 futex calls in 2 s, 14% of its bandwidth).
func (w *worker) wokeWaiter() bool {
	n := cq.Events()
	woke := n != w.events
	w.events = n
	return woke
}

// flush sends the packets the engines produced and returns their buffers to the pool.
func (w *worker) flush() {
	pkts := w.out.Packets
	completed := w.out.Completions > 0
	if len(pkts) == 0 {
		w.out.Completions = 0
		return
	}
	if w.keepACKs(pkts, completed) {
		return
	}
	if len(pkts) >= yieldBeforeSend && w.wokeWaiter() {
		// A goroutine the engines just woke (a CQ's waiter) waits in this P's runnext slot,
		// and a long sendmmsg keeps the P: traced on two cores, it stayed stranded there for
		// the whole call, a median 280 µs, with the other P idle. Let it run first.
		runtime.Gosched()
	}
	msgs := w.msgs[:0]
	for i := range pkts {
		msgs = append(msgs, outgoing(&pkts[i]))
	}
	for sent := 0; sent < len(msgs); {
		n, err := w.tx.Send(msgs[sent:])
		sent += n
		if err == nil {
			continue
		}
		if errors.Is(err, net.ErrClosed) {
			break
		}
		// msgs[sent] was refused (no route, bad address): count it and go on with the rest.
		w.r.dev.Inc(counter.SendErr)
		if w.lastSend == nil || w.lastSend.Error() != err.Error() {
			w.r.log.Warn("gorxe send failed", "dst", msgs[sent].Dst, "err", err)
		}
		w.lastSend = err
		sent++
	}
	for i := range pkts {
		putBuf(pkts[i].Buf)
		pkts[i] = transport.Packet{}
	}
	for i := range msgs {
		msgs[i] = netio.Message{}
	}
	w.msgs = msgs[:0]
	w.out.Reset()
}

// shutdown moves the worker's QPs to the error state, so their outstanding work completes with
// WCWRFlushErr, runs them once more and stops the timer. Nothing runs on the worker afterwards.
// The caller holds w.run.
func (w *worker) shutdown() {
	now := w.r.clk.Now()
	w.out.Want = w.r.eventMask()
	for h := range w.own {
		from := h.q.State()
		if h.q.Modify(&qp.Attr{State: qp.StateErr}, qp.AttrState) == nil {
			w.r.logState(h, from, qp.StateErr, "device closed")
		}
		h.eng.Run(now, &w.out)
		if len(w.out.Events) != 0 {
			w.report(h)
		}
		h.dead = true
	}
	w.flush()
	if w.timer != nil {
		w.timer.Stop()
	}
	w.timers.Reset()
	w.stopped = true
	// Received batches still queued hold pooled buffers; give them back.
	w.mu.Lock()
	inbox := w.inbox
	w.inbox = nil
	w.mu.Unlock()
	for _, b := range inbox {
		dropBatch(b)
	}
}
