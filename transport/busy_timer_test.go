package transport

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestBusyExpiry: an expiry within a timeout of the peer's last response is forgiven, one older
// is not, and the allowance runs out.
func TestBusyExpiry(t *testing.T) {
	const timeout = 100 * time.Millisecond
	t0 := time.Unix(1000, 0)
	var c completer
	assert.False(t, c.busyExpiry(t0, timeout), "nothing heard yet")

	c.lateLeft, c.heard = 2, t0
	assert.True(t, c.busyExpiry(t0.Add(timeout-time.Millisecond), timeout), "heard within the timeout")
	assert.False(t, c.busyExpiry(t0.Add(timeout), timeout), "heard a whole timeout ago")
	assert.True(t, c.busyExpiry(t0.Add(time.Millisecond), timeout))
	assert.Zero(t, c.lateLeft)
	assert.False(t, c.busyExpiry(t0.Add(time.Millisecond), timeout), "allowance spent")
}
