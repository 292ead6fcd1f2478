package cq

import (
	"context"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConcurrentPushPoll has producers pushing in batches while consumers poll and wait on the
// channel; every completion arrives exactly once and each producer's completions stay in order.
func TestConcurrentPushPoll(t *testing.T) {
	const producers, perProducer = 4, 2000
	ch := NewCompChannel(nil)
	c := mustNew(t, 64, Options{Channel: ch})
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			var batch [8]WC
			for i := 0; i < perProducer; {
				n := min(len(batch), perProducer-i)
				for k := range n {
					batch[k] = WC{WRID: uint64(p)<<32 | uint64(i+k)}
				}
				// Leave room for every producer's batch so the CQ cannot overflow, as a
				// transport does by sizing CQs for its queues.
				for c.Len()+producers*len(batch) > c.CQE() {
					runtime.Gosched()
				}
				for k := range n {
					if !assert.NoError(t, c.Push(&batch[k], false, Token{})) {
						return
					}
				}
				i += n
			}
		})
	}
	next := make([]uint64, producers)
	total := 0
	var out [16]WC
	for total < producers*perProducer {
		_ = c.ReqNotify(false)
		n := c.Poll(out[:])
		for _, wc := range out[:n] {
			p, seq := wc.WRID>>32, wc.WRID&0xffffffff
			require.Equal(t, next[p], seq, "producer %d: sequence", p)
			next[p]++
		}
		total += n
		if n == 0 {
			if e, err := ch.GetEvent(context.Background()); err == nil {
				_ = e.AckEvents(1)
			}
		}
	}
	wg.Wait()
}
