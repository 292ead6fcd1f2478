package main

import "time"

// pollSpin is how long one call into Go for a program's empty poll_cq goes on looking at the
// network when the program polls the CQ again at once (ring.c's TIGHT_NS): such a program would
// only have called again, and one call for many looks saves it the runtime's entry and exit on
// each. ib_send_lat on the library, three interleaved rounds: typical half round trip 13.0-13.7
// -> 12.7-13.2 us. The budget bounds how long a look the program did not ask for holds its
// thread, and so how late its own checks between polls (a deadline, a signal's flag) run, and
// it spreads the cost of a call over about twenty looks.
const pollSpin = 20 * time.Microsecond

// spinPoll calls poll until it reports something or spin has passed since the first call, at
// least once, and reports whether it found anything.
func spinPoll(poll func() bool, spin time.Duration) bool {
	if poll() {
		return true
	}
	if spin <= 0 {
		return false
	}
	end := time.Since(procsEpoch) + spin
	for time.Since(procsEpoch) < end {
		if poll() {
			return true
		}
	}
	return false
}
