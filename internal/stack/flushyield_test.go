package stack

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cq"
)

// A worker yields before a long send only when a completion event was queued since its last
// look: a busy poller's completions, of CQs nobody armed, wake no goroutine.
func TestWokeWaiter(t *testing.T) {
	w := &worker{}
	w.wokeWaiter() // whatever earlier tests queued
	assert.False(t, w.wokeWaiter(), "nothing queued since")

	ch := cq.NewCompChannel(nil)
	c, err := cq.New(4, cq.Options{Channel: ch})
	require.NoError(t, err)
	require.NoError(t, c.Push(&cq.WC{WRID: 1}, false, cq.Token{}))
	assert.False(t, w.wokeWaiter(), "a completion of a CQ nobody armed")

	require.NoError(t, c.ReqNotify(false))
	require.NoError(t, c.Push(&cq.WC{WRID: 2}, false, cq.Token{}))
	assert.True(t, w.wokeWaiter(), "a completion event queued")
	assert.False(t, w.wokeWaiter(), "counted once")
}
