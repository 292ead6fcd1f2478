package perftest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestWaiterSpinsByTime checks who spins and for how long: a latency test's waiter polls for
// spinFor, reading the clock every spinCheck polls, and a bandwidth test's or an event waiter's
// sleeps at once.
func TestWaiterSpinsByTime(t *testing.T) {
	ctx := context.Background()
	lat := newWaiter(ctx, &Params{Test: Test{Verb: VerbSend, Kind: Lat}}, time.Second)
	assert.Equal(t, spinFor, lat.spin)

	long := time.Now().Add(-2 * spinFor)
	assert.True(t, lat.spinning(long, spinCheck-1), "the clock is read only every spinCheck polls")
	assert.False(t, lat.spinning(long, spinCheck), "the spin ends once spinFor has passed")
	forever := &waiter{spin: time.Hour}
	assert.True(t, forever.spinning(time.Now(), spinCheck))

	for _, p := range []*Params{
		{Test: Test{Verb: VerbSend, Kind: BW}},
		{Test: Test{Verb: VerbSend, Kind: Lat}, Events: true},
	} {
		w := newWaiter(ctx, p, time.Second)
		assert.False(t, w.spinning(time.Now(), 1), "%v events=%v", p.Test.Kind, p.Events)
	}
}
