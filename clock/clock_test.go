package clock

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func TestFakeRunsTimersInDeadlineOrder(t *testing.T) {
	c := NewFake(epoch)
	var got []string
	var at []time.Duration
	record := func(name string) func() {
		return func() {
			got = append(got, name)
			at = append(at, c.Now().Sub(epoch))
		}
	}
	c.AfterFunc(30*time.Millisecond, record("c"))
	c.AfterFunc(10*time.Millisecond, record("a"))
	c.AfterFunc(20*time.Millisecond, record("b1"))
	c.AfterFunc(20*time.Millisecond, record("b2")) // same deadline: arming order
	c.AfterFunc(time.Second, record("late"))

	c.Advance(30 * time.Millisecond)
	want := []string{"a", "b1", "b2", "c"}
	wantAt := []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond}
	require.Len(t, got, len(want), "ran %v, want %v", got, want)
	for i := range want {
		require.Equal(t, want[i], got[i], "run %d = %s at %v, want %s at %v", i, got[i], at[i], want[i], wantAt[i])
		require.Equal(t, wantAt[i], at[i], "run %d = %s at %v, want %s at %v", i, got[i], at[i], want[i], wantAt[i])
	}
	d := c.Now().Sub(epoch)
	require.Equal(t, 30*time.Millisecond, d, "Now = epoch+%v, want +30ms", d)
	require.Equal(t, 1, c.Pending(), "Pending = %d, want 1", c.Pending())
	dl, ok := c.NextDeadline()
	require.True(t, ok, "NextDeadline = %v %v", dl, ok)
	require.True(t, dl.Equal(epoch.Add(time.Second)), "NextDeadline = %v %v", dl, ok)
}

func TestFakeCallbackArmsTimerWithinWindow(t *testing.T) {
	c := NewFake(epoch)
	var fired []time.Duration
	var tick func()
	tick = func() {
		fired = append(fired, c.Now().Sub(epoch))
		if len(fired) < 5 {
			c.AfterFunc(10*time.Millisecond, tick)
		}
	}
	c.AfterFunc(10*time.Millisecond, tick)
	c.Advance(35 * time.Millisecond)
	require.Len(t, fired, 3, "fired at %v, want 10ms,20ms,30ms", fired)
	require.Equal(t, 30*time.Millisecond, fired[2], "fired at %v, want 10ms,20ms,30ms", fired)
	c.Advance(time.Hour)
	require.Len(t, fired, 5, "fired at %v, want five ticks ending at 50ms", fired)
	require.Equal(t, 50*time.Millisecond, fired[4], "fired at %v, want five ticks ending at 50ms", fired)
}

func TestFakeStopAndReset(t *testing.T) {
	c := NewFake(epoch)
	n := 0
	tm := c.AfterFunc(10*time.Millisecond, func() { n++ })
	require.True(t, tm.Stop(), "Stop of pending timer returned false")
	require.False(t, tm.Stop(), "second Stop returned true")
	c.Advance(time.Second)
	require.Equal(t, 0, n, "stopped timer fired")
	require.False(t, tm.Reset(5*time.Millisecond), "Reset of stopped timer reported pending")
	c.Advance(4 * time.Millisecond)
	require.Equal(t, 0, n, "fired early")
	// now due at +9ms from here
	require.True(t, tm.Reset(5*time.Millisecond), "Reset of pending timer reported not pending")
	c.Advance(4 * time.Millisecond)
	require.Equal(t, 0, n, "Reset did not push the deadline back")
	c.Advance(time.Millisecond)
	require.Equal(t, 1, n, "n = %d after deadline, want 1", n)
	require.False(t, tm.Stop(), "Stop after firing returned true")
}

func TestFakeZeroDelayRunsOnNextAdvance(t *testing.T) {
	c := NewFake(epoch)
	ran := false
	c.AfterFunc(-time.Second, func() { ran = true })
	require.False(t, ran, "AfterFunc ran the callback itself")
	c.Advance(0)
	require.True(t, ran, "Advance(0) did not run a due timer")
	c.AdvanceTo(epoch.Add(-time.Hour))
	require.True(t, c.Now().Equal(epoch), "AdvanceTo moved time backwards")
}

func TestFakeConcurrentUse(t *testing.T) {
	c := NewFake(epoch)
	var mu sync.Mutex
	count, stopped := 0, 0
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				tm := c.AfterFunc(time.Duration(i)*time.Microsecond, func() {
					mu.Lock()
					count++
					mu.Unlock()
				})
				if i%3 == 0 && tm.Stop() {
					mu.Lock()
					stopped++
					mu.Unlock()
				}
				_ = c.Now()
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 100; i++ {
			c.Advance(time.Microsecond)
		}
	}()
	wg.Wait()
	c.Advance(time.Second)
	require.Equal(t, 800, count+stopped, "fired %d, stopped %d; want 800 in all", count, stopped)
	require.NotEqual(t, 0, stopped, "fired %d, stopped %d; want 800 in all", count, stopped)
}

func TestRealAfterFunc(t *testing.T) {
	var c Clock = Real{}
	before := c.Now()
	done := make(chan time.Time, 1)
	c.AfterFunc(time.Millisecond, func() { done <- time.Now() })
	at := <-done
	require.GreaterOrEqual(t, at.Sub(before), time.Millisecond, "fired after %v, want >= 1ms", at.Sub(before))
	tm := c.AfterFunc(time.Hour, func() { assert.Fail(t, "stopped timer fired") })
	require.True(t, tm.Stop(), "Stop of pending real timer returned false")
}

func TestFakeWaitNextDeadline(t *testing.T) {
	start := time.Unix(100, 0)
	f := NewFake(start)
	armedAt := start.Add(5 * time.Millisecond)
	done := make(chan error, 1)
	go func() { done <- f.WaitNextDeadline(context.Background(), armedAt) }()
	f.AfterFunc(time.Second, func() {}) // a later timer does not satisfy the wait
	tm := f.AfterFunc(5*time.Millisecond, func() {})
	require.NoError(t, <-done, "WaitNextDeadline")
	tm.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := f.WaitNextDeadline(ctx, armedAt)
	assert.ErrorIs(t, err, context.Canceled, "after Stop, WaitNextDeadline = %v, want context.Canceled", err)
}

func TestFakeSlipLeavesTimersForAdvance(t *testing.T) {
	start := time.Unix(100, 0)
	f := NewFake(start)
	fired := 0
	f.AfterFunc(time.Second, func() { fired++ })
	f.Slip(2 * time.Second)
	require.Equal(t, start.Add(2*time.Second), f.Now())
	require.Zero(t, fired, "slip ran a timer")
	f.Advance(0)
	require.Equal(t, 1, fired, "the timer that fell due during the slip")
	require.Equal(t, start.Add(2*time.Second), f.Now(), "time went back")
}
