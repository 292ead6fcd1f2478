//go:build !race

package netio

// Without the race detector the happens-before annotations of race_on.go cost nothing.
func raceReleaseIO() {}
func raceAcquireIO() {}
