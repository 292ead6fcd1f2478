package main

import (
	"testing"
	"time"

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
