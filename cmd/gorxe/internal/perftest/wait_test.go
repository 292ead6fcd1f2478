package perftest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWaiterSpinsByTime checks who spins and for how long: a latency test's waiter polls for
// spinFor, reading the clock every spinCheck polls, and a bandwidth test's or an event waiter's
// sleeps at once.
func TestWaiterSpinsByTime(t *testing.T) {
	ctx := context.Background()
	lat := newWaiter(ctx, &Params{Test: Test{Verb: VerbSend, Kind: Lat}}, time.Second)
	assert.Equal(t, spinFor, lat.spin)

	var start time.Time
	require.True(t, lat.spinning(&start, 1), "a spin starts")
	require.False(t, start.IsZero(), "and notes when")
	start = start.Add(-2 * spinFor)
	assert.True(t, lat.spinning(&start, spinCheck-1), "the clock is read only every spinCheck polls")
	assert.False(t, lat.spinning(&start, spinCheck), "the spin ends once spinFor has passed")
	forever := &waiter{spin: time.Hour}
	start = time.Time{}
	forever.spinning(&start, 1)
	assert.True(t, forever.spinning(&start, spinCheck))

	for _, p := range []*Params{
		{Test: Test{Verb: VerbSend, Kind: BW}},
		{Test: Test{Verb: VerbSend, Kind: Lat}, Events: true},
	} {
		w := newWaiter(ctx, p, time.Second)
		var start time.Time
		assert.False(t, w.spinning(&start, 1), "%v events=%v", p.Test.Kind, p.Events)
		assert.True(t, start.IsZero(), "a waiter that does not spin reads no clock")
	}
}
