package main

import "time"

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
