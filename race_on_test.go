//go:build race

package gorxe

// raceEnabled: the race detector is on, under which sync.Pool drops items at random, so the
// packet-buffer pools allocate and allocation counts mean nothing.
const raceEnabled = true
