package clock

import (
	"context"
	"sync"
	"testing"
	"time"

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
	if len(got) != len(want) {
		t.Fatalf("ran %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] || at[i] != wantAt[i] {
			t.Fatalf("run %d = %s at %v, want %s at %v", i, got[i], at[i], want[i], wantAt[i])
		}
	}
	if d := c.Now().Sub(epoch); d != 30*time.Millisecond {
		t.Fatalf("Now = epoch+%v, want +30ms", d)
	}
	if c.Pending() != 1 {
		t.Fatalf("Pending = %d, want 1", c.Pending())
	}
	if dl, ok := c.NextDeadline(); !ok || !dl.Equal(epoch.Add(time.Second)) {
		t.Fatalf("NextDeadline = %v %v", dl, ok)
	}
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
	if len(fired) != 3 || fired[2] != 30*time.Millisecond {
		t.Fatalf("fired at %v, want 10ms,20ms,30ms", fired)
	}
	c.Advance(time.Hour)
	if len(fired) != 5 || fired[4] != 50*time.Millisecond {
		t.Fatalf("fired at %v, want five ticks ending at 50ms", fired)
	}
}

func TestFakeStopAndReset(t *testing.T) {
	c := NewFake(epoch)
	n := 0
	tm := c.AfterFunc(10*time.Millisecond, func() { n++ })
	if !tm.Stop() {
		t.Fatal("Stop of pending timer returned false")
	}
	if tm.Stop() {
		t.Fatal("second Stop returned true")
	}
	c.Advance(time.Second)
	if n != 0 {
		t.Fatal("stopped timer fired")
	}
	if tm.Reset(5 * time.Millisecond) {
		t.Fatal("Reset of stopped timer reported pending")
	}
	c.Advance(4 * time.Millisecond)
	if n != 0 {
		t.Fatal("fired early")
	}
	if !tm.Reset(5 * time.Millisecond) { // now due at +9ms from here
		t.Fatal("Reset of pending timer reported not pending")
	}
	c.Advance(4 * time.Millisecond)
	if n != 0 {
		t.Fatal("Reset did not push the deadline back")
	}
	c.Advance(time.Millisecond)
	if n != 1 {
		t.Fatalf("n = %d after deadline, want 1", n)
	}
	if tm.Stop() {
		t.Fatal("Stop after firing returned true")
	}
}

func TestFakeZeroDelayRunsOnNextAdvance(t *testing.T) {
	c := NewFake(epoch)
	ran := false
	c.AfterFunc(-time.Second, func() { ran = true })
	if ran {
		t.Fatal("AfterFunc ran the callback itself")
	}
	c.Advance(0)
	if !ran {
		t.Fatal("Advance(0) did not run a due timer")
	}
	c.AdvanceTo(epoch.Add(-time.Hour))
	if !c.Now().Equal(epoch) {
		t.Fatal("AdvanceTo moved time backwards")
	}
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
	if count+stopped != 800 || stopped == 0 {
		t.Fatalf("fired %d, stopped %d; want 800 in all", count, stopped)
	}
}

func TestRealAfterFunc(t *testing.T) {
	var c Clock = Real{}
	before := c.Now()
	done := make(chan time.Time, 1)
	c.AfterFunc(time.Millisecond, func() { done <- time.Now() })
	if at := <-done; at.Sub(before) < time.Millisecond {
		t.Fatalf("fired after %v, want >= 1ms", at.Sub(before))
	}
	tm := c.AfterFunc(time.Hour, func() { t.Error("stopped timer fired") })
	if !tm.Stop() {
		t.Fatal("Stop of pending real timer returned false")
	}
}

func TestFakeWaitNextDeadline(t *testing.T) {
	start := time.Unix(100, 0)
	f := NewFake(start)
	armedAt := start.Add(5 * time.Millisecond)
	done := make(chan error, 1)
	go func() { done <- f.WaitNextDeadline(context.Background(), armedAt) }()
	f.AfterFunc(time.Second, func() {}) // a later timer does not satisfy the wait
	tm := f.AfterFunc(5*time.Millisecond, func() {})
	if err := <-done; err != nil {
		t.Fatalf("WaitNextDeadline: %v", err)
	}
	tm.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := f.WaitNextDeadline(ctx, armedAt); err != context.Canceled {
		t.Errorf("after Stop, WaitNextDeadline = %v, want context.Canceled", err)
	}
}
