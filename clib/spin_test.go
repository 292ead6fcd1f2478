package main

import (
	"testing"
	"time"

	"github.com/gorxe/gorxe"
	"github.com/stretchr/testify/assert"
)

// spinPoll looks once without a budget, stops at the first look that finds something, and with
// nothing to find looks until its budget is spent.
func TestSpinPoll(t *testing.T) {
	looks := 0
	empty := func() bool { looks++; return false }
	assert.False(t, spinPoll(empty, 0))
	assert.Equal(t, 1, looks, "looks without a budget")

	looks = 0
	third := func() bool { looks++; return looks == 3 }
	assert.True(t, spinPoll(third, time.Hour))
	assert.Equal(t, 3, looks, "looks until the third finds something")

	looks = 0
	start := time.Now()
	assert.False(t, spinPoll(empty, 2*time.Millisecond))
	assert.GreaterOrEqual(t, time.Since(start), 2*time.Millisecond, "time spent looking")
	assert.Greater(t, looks, 1)
}

// A spin that looks at a CQ's ring ends when a completion lands there, whoever wrote it, and
// not when its budget (an hour here) is spent.
func TestSpinEndsOnRing(t *testing.T) {
	var hdr gorxe.CQRingHeader
	assert.False(t, ringHolds(&hdr), "an empty ring")
	looks := 0
	written := make(chan struct{})
	look := func() bool {
		if looks++; looks == 3 {
			go func() { hdr.Tail.Add(1); close(written) }()
		}
		return ringHolds(&hdr)
	}
	assert.True(t, spinPoll(look, time.Hour))
	<-written
	hdr.Head.Add(1)
	assert.False(t, ringHolds(&hdr), "every completion polled")
	hdr.Overrun.Store(1)
	assert.True(t, ringHolds(&hdr), "an overrun ring")
}
