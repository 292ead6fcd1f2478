package gorxe

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorxe/gorxe/clock"
	"github.com/gorxe/gorxe/netio"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/transport"
)

// engine is what a worker drives for each QP: the transport's per-QP state machine.
type engine interface {
	Receive(now time.Time, p *packet.Parsed, from transport.Path, out *transport.Output)
	Run(now time.Time, out *transport.Output)
	Deadline() time.Time
}

// qpCore is the device layer's handle on one QP: its engine and the worker that owns it.
type qpCore struct {
	qpn uint32
	eng engine
	w   *worker
	// flush moves the QP to the error state on the worker during Close.
	flush func()

	queued atomic.Bool // on w.pending, waiting for Run

	// Owned by the worker goroutine.
	deadline time.Time
	dead     bool
}

// notify asks the QP's worker to run its engine soon: posted work, or a change made outside the
// worker. It never blocks.
func (c *qpCore) notify() {
	if c.queued.Swap(true) {
		return
	}
	w := c.w
	w.mu.Lock()
	w.pending = append(w.pending, c)
	w.mu.Unlock()
	w.wake()
}

// worker runs the engines of the QPs mapped to it, one call at a time: received packets, posted
// work, control requests and expired timers all go through its goroutine, so an engine never
// sees two callers at once and Modify is ordered with the packets around it.
type worker struct {
	d    *Device
	idx  int
	rx   chan *rxBatch // received packets for this worker's QPs
	ctl  chan func()   // control requests to run on the worker (create, modify, destroy)
	kick chan struct{} // capacity 1: pending work or an expired timer
	quit chan struct{} // closed by Device.Close

	mu      sync.Mutex
	pending []*qpCore // QPs that asked to be run; guarded by mu

	timerDue atomic.Bool

	// Owned by the worker goroutine.
	own      map[*qpCore]struct{} // live QPs of this worker
	running  []*qpCore            // the pending list being worked on, swapped with pending
	timer    clock.Timer
	timerAt  time.Time
	timers   clock.Queue[*qpCore] // QP deadlines; an entry that no longer matches its QP's deadline is stale
	out      transport.Output
	msgs     []netio.Message
	lastSend error
}

// maxBatchesPerWake bounds how many received batches a worker handles before it looks at posted
// work and timers again, so a flood of inbound traffic does not starve its senders.
const maxBatchesPerWake = 8

// flushThreshold is the number of queued outgoing packets that makes a worker send before it
// handles the next packet, which bounds the buffers one wake can hold.
const flushThreshold = netio.IdealBatchSize

func (d *Device) startWorkers() {
	d.workers = make([]*worker, d.cfg.workers)
	for i := range d.workers {
		w := &worker{
			d:    d,
			idx:  i,
			rx:   make(chan *rxBatch, 64),
			ctl:  make(chan func()),
			kick: make(chan struct{}, 1),
			quit: make(chan struct{}),
			own:  make(map[*qpCore]struct{}),
		}
		w.out.Alloc = getBuf
		d.workers[i] = w
	}
	d.wWG.Add(len(d.workers))
	for _, w := range d.workers {
		go w.loop()
	}
}

// workerFor returns the worker that owns QP number qpn.
func (d *Device) workerFor(qpn uint32) *worker { return d.workers[int(qpn%uint32(len(d.workers)))] }

func (w *worker) wake() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

func (w *worker) loop() {
	defer w.d.wWG.Done()
	for {
		select {
		case b := <-w.rx:
			w.receive(b)
			for i := 1; i < maxBatchesPerWake; i++ {
				select {
				case b = <-w.rx:
					w.receive(b)
					continue
				default:
				}
				break
			}
		case f := <-w.ctl:
			f()
		case <-w.kick:
		case <-w.quit:
			w.shutdown()
			return
		}
		w.service()
	}
}

// do runs f on the worker and waits for it. It fails with ErrDeviceClosed once the worker is
// stopping; f then does not run.
func (w *worker) do(f func()) error {
	done := make(chan struct{})
	select {
	case w.ctl <- func() { f(); close(done) }:
	case <-w.quit:
		return ErrDeviceClosed
	}
	<-done
	return nil
}

// receive hands each packet of b to its QP's engine, then recycles the buffers and the batch.
func (w *worker) receive(b *rxBatch) {
	now := w.d.clk.Now()
	for i := range b.pkts {
		p := &b.pkts[i]
		if c := p.core; !c.dead {
			c.eng.Receive(now, &p.parsed, p.from, &w.out)
			w.track(c)
			if len(w.out.Packets) >= flushThreshold {
				w.flush()
			}
		}
		putBuf(p.buf)
		*p = rxPacket{}
	}
	putBatch(b)
}

// service runs the QPs that asked for it and those whose deadline passed, sends what they
// produced and re-arms the timer.
func (w *worker) service() {
	now := w.d.clk.Now()
	w.mu.Lock()
	w.running, w.pending = w.pending, w.running[:0]
	w.mu.Unlock()
	for i, c := range w.running {
		c.queued.Store(false)
		if !c.dead {
			c.eng.Run(now, &w.out)
			w.track(c)
			if len(w.out.Packets) >= flushThreshold {
				w.flush()
			}
		}
		w.running[i] = nil
	}
	if w.timerDue.Swap(false) {
		w.timerAt = time.Time{}
		w.expire(now)
	}
	w.flush()
	w.arm(now)
}

// track records c's next deadline after an engine call.
func (w *worker) track(c *qpCore) {
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
		c.eng.Run(now, &w.out)
		w.track(c)
		if len(w.out.Packets) >= flushThreshold {
			w.flush()
		}
	}
}

// arm sets the worker's single timer to the earliest live deadline of its QPs.
func (w *worker) arm(now time.Time) {
	var at time.Time
	for {
		t, c, ok := w.timers.Peek()
		if !ok {
			if w.timer != nil && !w.timerAt.IsZero() {
				w.timer.Stop()
			}
			w.timerAt = time.Time{}
			return
		}
		if !c.dead && c.deadline.Equal(t) {
			at = t
			break
		}
		w.timers.Pop() // superseded entry
	}
	if at.Equal(w.timerAt) {
		return
	}
	w.timerAt = at
	if w.timer == nil {
		w.timer = w.d.clk.AfterFunc(at.Sub(now), w.onTimer)
	} else {
		w.timer.Reset(at.Sub(now))
	}
}

// onTimer runs on the clock's goroutine: it only flags the expiry for the worker.
func (w *worker) onTimer() {
	w.timerDue.Store(true)
	w.wake()
}

// flush sends the packets the engines produced and returns their buffers to the pool.
func (w *worker) flush() {
	pkts := w.out.Packets
	if len(pkts) == 0 {
		return
	}
	msgs := w.msgs[:0]
	for i := range pkts {
		p := &pkts[i]
		msgs = append(msgs, netio.Message{
			Buf: p.Buf, Src: p.Path.Src, Dst: p.Path.Dst,
			TOS: p.Path.TrafficClass, TTL: p.Path.HopLimit,
		})
	}
	for sent := 0; sent < len(msgs); {
		n, err := w.d.conn.Send(msgs[sent:])
		sent += n
		w.d.tc.SentPkts.Add(uint64(n)) // rxe's sent_pkts counts every packet: requests, ACKs, responses
		if err == nil {
			continue
		}
		if errors.Is(err, net.ErrClosed) {
			break
		}
		// msgs[sent] was refused (no route, bad address): count it and go on with the rest.
		w.d.tc.SendErr.Add(1)
		if w.lastSend == nil || w.lastSend.Error() != err.Error() {
			w.d.log.Warn("gorxe send failed", "dst", msgs[sent].Dst, "err", err)
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
// WCWRFlushErr, runs them once more and stops the timer.
func (w *worker) shutdown() {
	now := w.d.clk.Now()
	for c := range w.own {
		if c.flush != nil {
			c.flush()
		}
		c.eng.Run(now, &w.out)
		c.dead = true
	}
	w.flush()
	if w.timer != nil {
		w.timer.Stop()
	}
	w.timers.Reset()
	// Receive batches still queued hold pooled buffers; give them back.
	for {
		select {
		case b := <-w.rx:
			for i := range b.pkts {
				putBuf(b.pkts[i].buf)
				b.pkts[i] = rxPacket{}
			}
			putBatch(b)
		default:
			return
		}
	}
}
