package clock

import "time"

// Clock tells the time and schedules callbacks.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc arranges for f to run once d has elapsed and returns a handle that can cancel or
	// re-arm it. A duration of zero or less makes f due immediately.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending or expired callback created by [Clock.AfterFunc]. Its methods have the
// semantics of the same methods of [time.Timer].
type Timer interface {
	// Stop cancels the timer. It reports whether the call stopped a pending timer; false means the
	// callback already ran (or is running) or the timer was already stopped.
	Stop() bool
	// Reset re-arms the timer to run its callback once d has elapsed from now, whether or not it
	// had fired. It reports whether the timer was pending.
	Reset(d time.Duration) bool
}

// Real is the [Clock] backed by the operating system's clock and the Go runtime's timers.
// Callbacks run on their own goroutine, as with [time.AfterFunc]. The zero value is ready to use.
type Real struct{}

var _ Clock = Real{}

// Now returns [time.Now].
func (Real) Now() time.Time { return time.Now() }

// AfterFunc wraps [time.AfterFunc].
func (Real) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
