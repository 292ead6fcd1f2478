//go:build !race

package transport

// raceEnabled scales long tests down under the race detector, which slows them ten-fold.
const raceEnabled = false
