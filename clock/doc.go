// Package clock abstracts the passage of time so that timer-driven code can run against the
// wall clock in production and against a manually stepped clock in tests.
//
// Protocol logic in gorxe never reads the time itself: it is handed "now" by a caller that owns a
// [Clock]. Tests substitute a [Fake], whose [Fake.Advance] runs every timer that falls due, one at a
// time, on the calling goroutine and in deadline order, so a sequence of retransmission timeouts
// spanning seconds of simulated time completes in microseconds and always in the same order.
package clock
