package main

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
)

// An empty poll gives the processor away once per yieldInterval at most, counted from the last
// poll that did, and one of several pollers at the same instant takes the turn.
func TestYieldDue(t *testing.T) {
	iv := int64(yieldInterval)
	lastYield.Store(0)
	t.Cleanup(func() { lastYield.Store(0) })
	for _, step := range []struct {
		now  int64
		want bool
	}{
		{iv - 1, false},
		{iv, true},
		{iv + 1, false},
		{2*iv - 1, false},
		{2*iv + 5, true},
		{3 * iv, false}, // counted from the last yield, 2*iv+5
		{3*iv + 5, true},
	} {
		assert.Equal(t, step.want, yieldDue(step.now), "poll at %d ns", step.now)
	}

	var wg sync.WaitGroup
	var took atomic.Int32
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if yieldDue(10 * iv) {
				took.Add(1)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, int32(1), took.Load(), "pollers that took the turn at one instant")
}

// othersRunnable sees a goroutine that waits for the processor (with one processor, one just
// started waits until this one gives it away), and sees none once it has run: the runtime's own
// goroutines (a collection's workers) may wait at any moment, so some look after it must find
// none.
func TestOthersRunnable(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	ran := make(chan struct{})
	go close(ran)
	assert.True(t, othersRunnable(), "a goroutine started and not yet run")
	<-ran
	none := false
	for range 100 {
		runtime.Gosched()
		if none = !othersRunnable(); none {
			break
		}
	}
	assert.True(t, none, "no look found nothing waiting once the goroutine had run")
}
