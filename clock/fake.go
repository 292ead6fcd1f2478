package clock

import (
	"container/heap"
	"sync"
	"time"
)

// Fake is a [Clock] whose time moves only when [Fake.Advance] or [Fake.AdvanceTo] is called.
// Timer callbacks run synchronously inside those calls, on the caller's goroutine, one after the
// other in order of deadline; timers sharing a deadline run in the order they were armed. While a
// callback runs, Now reports that callback's deadline, so code observing the time sees exactly what
// it would see with perfectly punctual timers.
//
// All methods are safe for concurrent use. Callbacks may call any method except Advance and
// AdvanceTo, which are serialised and would deadlock.
type Fake struct {
	advancing sync.Mutex // serialises Advance/AdvanceTo so callbacks run strictly one at a time

	mu     sync.Mutex // protects the fields below
	now    time.Time
	seq    uint64 // arming order, the tie-break between equal deadlines
	timers timerHeap
}

var _ Clock = (*Fake)(nil)

// NewFake returns a fake clock reading start.
func NewFake(start time.Time) *Fake {
	return &Fake{now: start}
}

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// AfterFunc arms a timer due at Now()+d. It never runs f itself: a timer with d <= 0 runs at the
// next Advance, including Advance(0).
func (f *Fake) AfterFunc(d time.Duration, fn func()) Timer {
	t := &fakeTimer{clock: f, fn: fn, index: -1}
	f.mu.Lock()
	f.armLocked(t, d)
	f.mu.Unlock()
	return t
}

// Advance moves the clock forward by d, running every timer that falls due on the way, including
// timers armed or re-armed by those callbacks. A negative d is treated as zero.
func (f *Fake) Advance(d time.Duration) {
	if d < 0 {
		d = 0
	}
	f.mu.Lock()
	target := f.now.Add(d)
	f.mu.Unlock()
	f.AdvanceTo(target)
}

// AdvanceTo moves the clock forward to t, running due timers as [Fake.Advance] does. If t is
// before the current time, only timers that are already due run and the time does not go back.
func (f *Fake) AdvanceTo(t time.Time) {
	f.advancing.Lock()
	defer f.advancing.Unlock()
	for {
		f.mu.Lock()
		if len(f.timers) == 0 || f.timers[0].when.After(t) {
			if t.After(f.now) {
				f.now = t
			}
			f.mu.Unlock()
			return
		}
		next := heap.Pop(&f.timers).(*fakeTimer)
		if next.when.After(f.now) {
			f.now = next.when
		}
		fn := next.fn
		f.mu.Unlock()
		fn()
	}
}

// NextDeadline returns the deadline of the earliest pending timer, and false if none is pending.
// Tests use it to step straight to the next event.
func (f *Fake) NextDeadline() (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.timers) == 0 {
		return time.Time{}, false
	}
	return f.timers[0].when, true
}

// Pending returns the number of armed timers.
func (f *Fake) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.timers)
}

func (f *Fake) armLocked(t *fakeTimer, d time.Duration) {
	if d < 0 {
		d = 0
	}
	t.when = f.now.Add(d)
	f.seq++
	t.seq = f.seq
	heap.Push(&f.timers, t)
}

// fakeTimer is the [Timer] of a [Fake]. index is its position in the heap, -1 when not pending.
type fakeTimer struct {
	clock *Fake
	fn    func()
	when  time.Time
	seq   uint64
	index int
}

func (t *fakeTimer) Stop() bool {
	f := t.clock
	f.mu.Lock()
	defer f.mu.Unlock()
	if t.index < 0 {
		return false
	}
	heap.Remove(&f.timers, t.index)
	return true
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	f := t.clock
	f.mu.Lock()
	defer f.mu.Unlock()
	pending := t.index >= 0
	if pending {
		heap.Remove(&f.timers, t.index)
	}
	f.armLocked(t, d)
	return pending
}

// timerHeap orders timers by deadline, then by arming order.
type timerHeap []*fakeTimer

func (h timerHeap) Len() int { return len(h) }

func (h timerHeap) Less(i, j int) bool {
	if !h[i].when.Equal(h[j].when) {
		return h[i].when.Before(h[j].when)
	}
	return h[i].seq < h[j].seq
}

func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}

func (h *timerHeap) Push(x any) {
	t := x.(*fakeTimer)
	t.index = len(*h)
	*h = append(*h, t)
}

func (h *timerHeap) Pop() any {
	old := *h
	n := len(old)
	t := old[n-1]
	old[n-1] = nil
	t.index = -1
	*h = old[:n-1]
	return t
}
