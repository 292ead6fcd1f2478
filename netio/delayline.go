package netio

import (
	"sync"
	"time"

	"github.com/gorxe/gorxe/clock"
)

// delayLine holds copies of datagrams until they fall due and then hands them, in order of due
// time (ties in the order they were added), to a delivery function. One clock timer is armed for
// the earliest datagram, so with a fake clock deliveries happen inside Advance.
type delayLine struct {
	clk     clock.Clock
	deliver func(batch []Message, dirs []Direction) // buffers are valid only during the call

	delivering sync.Mutex  // serialises deliveries so they stay in due order; taken before mu
	batch      []Message   // delivery scratch, guarded by delivering
	batchDirs  []Direction // the fault marks of each datagram of batch
	batchHeld  []*heldDatagram

	mu     sync.Mutex // guards the fields below
	held   clock.Queue[*heldDatagram]
	free   []*heldDatagram
	timer  clock.Timer
	closed bool
}

type heldDatagram struct {
	msg Message // msg.Buf aliases buf
	buf []byte
	dir Direction
}

func newDelayLine(clk clock.Clock, deliver func([]Message, []Direction)) *delayLine {
	return &delayLine{
		clk:       clk,
		deliver:   deliver,
		batch:     make([]Message, 0, IdealBatchSize),
		batchDirs: make([]Direction, 0, IdealBatchSize),
		batchHeld: make([]*heldDatagram, 0, IdealBatchSize),
	}
}

// add copies m, flips corruptBit in the copy (unless it is -1), and schedules it after delay; dir
// is how an observer is shown the copy when it is sent.
func (l *delayLine) add(m *Message, corruptBit int, delay time.Duration, dir Direction) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	var h *heldDatagram
	if n := len(l.free); n > 0 {
		h, l.free = l.free[n-1], l.free[:n-1]
	} else {
		h = new(heldDatagram)
	}
	h.buf = append(h.buf[:0], m.Buf...)
	flipBit(h.buf, corruptBit)
	h.msg = *m
	h.msg.Buf = h.buf
	h.dir = dir
	l.held.Push(l.clk.Now().Add(delay), h)
	if _, first, _ := l.held.Peek(); first == h {
		l.armLocked()
	}
}

// armLocked points the timer at the earliest held datagram.
func (l *delayLine) armLocked() {
	due, _, ok := l.held.Peek()
	if !ok {
		return
	}
	d := due.Sub(l.clk.Now())
	if l.timer == nil {
		l.timer = l.clk.AfterFunc(d, l.fire)
	} else {
		l.timer.Reset(d)
	}
}

// fire delivers every datagram that is due.
func (l *delayLine) fire() {
	for l.release(-1, true) > 0 {
	}
	l.mu.Lock()
	l.armLocked()
	l.mu.Unlock()
}

// release delivers up to max held datagrams (all if max < 0), earliest first, taking only those
// already due when onlyDue is set. It returns how many it delivered in this batch; callers loop.
func (l *delayLine) release(max int, onlyDue bool) int {
	l.delivering.Lock()
	defer l.delivering.Unlock()

	l.mu.Lock()
	now := l.clk.Now()
	l.batch, l.batchDirs, l.batchHeld = l.batch[:0], l.batchDirs[:0], l.batchHeld[:0]
	for len(l.batch) < cap(l.batch) && (max < 0 || len(l.batch) < max) {
		due, h, ok := l.held.Peek()
		if !ok || onlyDue && due.After(now) {
			break
		}
		l.held.Pop()
		l.batch = append(l.batch, h.msg)
		l.batchDirs = append(l.batchDirs, h.dir)
		l.batchHeld = append(l.batchHeld, h)
	}
	l.mu.Unlock()

	n := len(l.batch)
	if n == 0 {
		return 0
	}
	l.deliver(l.batch, l.batchDirs)

	l.mu.Lock()
	for i, h := range l.batchHeld {
		h.msg = Message{}
		l.free = append(l.free, h)
		l.batchHeld[i] = nil
		l.batch[i] = Message{}
	}
	l.mu.Unlock()
	return n
}

// len returns the number of datagrams in flight.
func (l *delayLine) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held.Len()
}

// close discards everything in flight and stops the timer.
func (l *delayLine) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.timer != nil {
		l.timer.Stop()
	}
	l.held.Reset()
	l.free = nil
}
