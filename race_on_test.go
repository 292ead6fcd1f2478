//go:build race

package gorxe

// raceEnabled says the race detector is on: its sync.Pool drops pooled buffers at random, so
// allocation counts mean nothing.
const raceEnabled = true
