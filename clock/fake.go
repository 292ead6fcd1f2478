package clock

import (
	"context"
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

	mu      sync.Mutex // protects the fields below
	now     time.Time
	timers  Queue[armed]  // may hold stale entries of stopped or re-armed timers
	pending int           // timers armed and not yet fired or stopped
	changed chan struct{} // closed and replaced whenever the armed timers change
}

// armed is one arming of a timer; it is stale once the timer's generation has moved on.
type armed struct {
	t   *fakeTimer
	gen uint64
}

func (a armed) live() bool { return a.t.armed && a.t.gen == a.gen }

var _ Clock = (*Fake)(nil)

// NewFake returns a fake clock reading start.
func NewFake(start time.Time) *Fake {
	return &Fake{now: start, changed: make(chan struct{})}
}

// changedLocked wakes every WaitNextDeadline.
func (f *Fake) changedLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// WaitNextDeadline blocks until the earliest armed timer is due at exactly at, or ctx is done.
// Tests use it to wait for code running on other goroutines to arm the timer they expect, before
// they advance the clock to it.
func (f *Fake) WaitNextDeadline(ctx context.Context, at time.Time) error {
	for {
		f.mu.Lock()
		when, _, ok := f.peekLocked()
		ch := f.changed
		f.mu.Unlock()
		if ok && when.Equal(at) {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
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
	t := &fakeTimer{clock: f, fn: fn}
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
		when, next, ok := f.peekLocked()
		if !ok || when.After(t) {
			if t.After(f.now) {
				f.now = t
			}
			f.mu.Unlock()
			return
		}
		f.timers.Pop()
		next.t.armed = false
		f.pending--
		f.changedLocked()
		if when.After(f.now) {
			f.now = when
		}
		fn := next.t.fn
		f.mu.Unlock()
		fn()
	}
}

// Slip moves the clock forward by d without running the timers that fall due, as a real clock's
// time passes while the goroutines of its timers wait to be scheduled; they run at the next
// Advance. Tests use it for code that checks deadlines itself rather than waiting for a timer.
func (f *Fake) Slip(d time.Duration) {
	if d <= 0 {
		return
	}
	f.mu.Lock()
	f.now = f.now.Add(d)
	f.mu.Unlock()
}

// NextDeadline returns the deadline of the earliest pending timer, and false if none is pending.
// Tests use it to step straight to the next event.
func (f *Fake) NextDeadline() (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	when, _, ok := f.peekLocked()
	return when, ok
}

// peekLocked returns the earliest live arming, discarding stale ones on the way.
func (f *Fake) peekLocked() (time.Time, armed, bool) {
	for {
		when, a, ok := f.timers.Peek()
		if !ok || a.live() {
			return when, a, ok
		}
		f.timers.Pop()
	}
}

// Pending returns the number of armed timers.
func (f *Fake) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pending
}

func (f *Fake) armLocked(t *fakeTimer, d time.Duration) {
	if d < 0 {
		d = 0
	}
	t.gen++
	t.armed = true
	f.pending++
	f.timers.Push(f.now.Add(d), armed{t, t.gen})
	f.changedLocked()
}

// fakeTimer is the [Timer] of a [Fake]. Each arming gets a new generation, so the queue entries of
// earlier armings are recognised as stale.
type fakeTimer struct {
	clock *Fake
	fn    func()
	gen   uint64
	armed bool
}

func (t *fakeTimer) Stop() bool {
	f := t.clock
	f.mu.Lock()
	defer f.mu.Unlock()
	return t.disarmLocked()
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	f := t.clock
	f.mu.Lock()
	defer f.mu.Unlock()
	pending := t.disarmLocked()
	f.armLocked(t, d)
	return pending
}

// disarmLocked cancels the pending arming, if any, and reports whether there was one.
func (t *fakeTimer) disarmLocked() bool {
	if !t.armed {
		return false
	}
	t.armed = false
	t.gen++
	t.clock.pending--
	t.clock.changedLocked()
	return true
}
