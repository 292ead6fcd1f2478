//go:build linux

package main

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// onThread runs f on a goroutine locked to a thread of its own and waits for it. The goroutine
// exits locked, so the thread (the task a ring's task work is queued to) dies with it.
func onThread(f func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		done <- f()
	}()
	return <-done
}

// pollCosts times the busy-poll check "is anything there?" each way, on an idle socket.
func pollCosts(cfg config) ([]pollCostRow, error) {
	fd, _, err := udpSocket(cfg.src)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	a, err := newArena(4 << 20)
	if err != nil {
		return nil, err
	}
	defer a.free()
	var rows []pollCostRow
	err = onThread(func() error {
		b := newBatch(a, 64, 2048, false)
		n := cfg.pollCalls
		t0 := time.Now()
		for range n {
			if _, err := b.recv(fd); err != nil {
				return err
			}
		}
		rows = append(rows, pollCostRow{Check: "recvmmsg(MSG_DONTWAIT), 64 entries, EAGAIN", NSPerCheck: perCall(t0, n), SyscallsPerCheck: 1})
		if cfg.uringErr != nil {
			return nil
		}
		r, err := newRing(64, 1024, 0)
		if err != nil {
			return err
		}
		defer r.close()
		rx, err := newUringRx(r, ringModes[0], fd, a, false, 64, 2048)
		if err != nil {
			return err
		}
		e0 := r.enters
		t0 = time.Now()
		for range n {
			if err := r.getEvents(); err != nil {
				return err
			}
		}
		rows = append(rows, pollCostRow{Check: "io_uring_enter(GETEVENTS), multishot receive armed, nothing pending", NSPerCheck: perCall(t0, n), SyscallsPerCheck: float64(r.enters-e0) / float64(n)})
		empty := 0
		t0 = time.Now()
		for range 100 * n {
			if r.ready() == 0 && !r.taskrunPending() {
				empty++
			}
		}
		rows = append(rows, pollCostRow{Check: "CQ tail and SQ flags peek, multishot receive armed", NSPerCheck: perCall(t0, 100*n)})
		if empty != 100*n || rx.rearms != 0 {
			return fmt.Errorf("idle socket delivered something")
		}
		return nil
	})
	return rows, err
}

func perCall(t0 time.Time, n int) float64 { return float64(time.Since(t0).Nanoseconds()) / float64(n) }

// visibility finds out whether a thread spinning on the CQ ring in user space, making no system
// call, sees the completion of its multishot receive when a datagram arrives from another thread,
// and how soon; with TASKRUN_FLAG also how soon the SQ ring's hint shows.
func visibility(cfg config, mode ringMode) (visibilityRow, error) {
	row := visibilityRow{Mode: mode.Name, Trials: cfg.trials, WindowMS: cfg.window.Milliseconds()}
	rfd, raddr, err := udpSocket(cfg.dst)
	if err != nil {
		return row, err
	}
	defer unix.Close(rfd)
	sfd, _, err := udpSocket(cfg.src)
	if err != nil {
		return row, err
	}
	defer unix.Close(sfd)
	to := &unix.SockaddrInet4{Addr: raddr.Addr().As4(), Port: int(raddr.Port())}
	a, err := newArena(1 << 20)
	if err != nil {
		return row, err
	}
	defer a.free()

	base := time.Now()
	var armed, sentAt atomic.Int64 // trial armed; when its datagram left (ns since base), 0 before
	armed.Store(-1)
	senderErr := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		msg := make([]byte, pingSize)
		for k := range int64(cfg.trials) {
			for armed.Load() != k {
				if armed.Load() == -2 {
					senderErr <- nil
					return
				}
				runtime.Gosched()
			}
			time.Sleep(100 * time.Microsecond)
			sentAt.Store(int64(time.Since(base)))
			if err := unix.Sendto(sfd, msg, 0, to); err != nil {
				senderErr <- err
				return
			}
		}
		senderErr <- nil
	}()

	var seen, hint []time.Duration
	err = onThread(func() error {
		defer armed.Store(-2)
		r, err := newRing(64, 1024, mode.flags)
		if err != nil {
			return err
		}
		defer r.close()
		rx, err := newUringRx(r, mode, rfd, a, false, 64, 2048)
		if err != nil {
			return err
		}
		for k := range int64(cfg.trials) {
			sentAt.Store(0)
			armed.Store(k)
			var t0 int64
			for t0 == 0 {
				t0 = sentAt.Load()
			}
			gotHint := false
			for {
				now := time.Since(base)
				if !gotHint && r.taskrunPending() {
					gotHint = true
					hint = append(hint, now-time.Duration(t0))
				}
				if r.ready() > 0 {
					seen = append(seen, now-time.Duration(t0))
					break
				}
				if now-time.Duration(t0) > cfg.window {
					break
				}
			}
			// Collect the datagram whichever way it has to be: entering the kernel posts it.
			for got := 0; got == 0; {
				got, err = rx.reap(func([]byte, int) {})
				if err != nil {
					return err
				}
				if got == 0 {
					if err := r.getEvents(); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
	if serr := <-senderErr; err == nil {
		err = serr
	}
	row.Seen = len(seen)
	row.SeenP50NS, row.SeenP99NS = pct(seen, 0.5), pct(seen, 0.99)
	row.Hinted = len(hint)
	row.HintP50NS = pct(hint, 0.5)
	return row, err
}

// affinity arms a multishot receive on one thread, which then sleeps as a goroutine blocked in
// Go would, and spins on another thread that sends the datagram and calls io_uring_enter
// (GETEVENTS) between peeks: does the completion reach a thread that did not arm the receive?
func affinity(cfg config, mode ringMode) (affinityRow, error) {
	row := affinityRow{Mode: mode.Name, Trials: cfg.trials / 10, WindowMS: cfg.window.Milliseconds()}
	rfd, sfd, err := socketPair(cfg.src, cfg.dst)
	if err != nil {
		return row, err
	}
	defer unix.Close(rfd)
	defer unix.Close(sfd)
	a, err := newArena(1 << 20)
	if err != nil {
		return row, err
	}
	defer a.free()
	var lat []time.Duration
	for range row.Trials {
		ready := make(chan *uringRx)
		release := make(chan struct{})
		owner := make(chan error, 1)
		go func() {
			owner <- onThread(func() error {
				r, err := newRing(64, 1024, mode.flags)
				if err != nil {
					close(ready)
					return err
				}
				rx, err := newUringRx(r, mode, rfd, a, false, 64, 2048)
				if err != nil {
					r.close()
					close(ready)
					return err
				}
				ready <- rx
				<-release // the owning thread sleeps in the scheduler
				r.close()
				return nil
			})
		}()
		rx, ok := <-ready
		if !ok {
			return row, <-owner
		}
		err := onThread(func() error {
			if _, err := unix.Write(sfd, make([]byte, pingSize)); err != nil {
				return err
			}
			t0 := time.Now()
			for time.Since(t0) < cfg.window {
				if rx.r.ready() > 0 {
					lat = append(lat, time.Since(t0))
					return nil
				}
				if err := rx.r.getEvents(); err != nil && row.EnterErr == "" {
					row.EnterErr = errors.Unwrap(err).Error()
				}
			}
			return nil
		})
		close(release)
		if oerr := <-owner; err == nil {
			err = oerr
		}
		if err != nil {
			return row, err
		}
		// The datagram may still sit in the socket; drain it for the next trial.
		for {
			if _, _, err := unix.Recvfrom(rfd, make([]byte, 2048), unix.MSG_DONTWAIT); err != nil {
				break
			}
		}
	}
	row.Seen = len(lat)
	row.SeenP50NS = pct(lat, 0.5)
	return row, nil
}

// pct is the q-quantile of samples (nearest rank), 0 for none; it sorts samples.
func pct(samples []time.Duration, q float64) int64 {
	if len(samples) == 0 {
		return 0
	}
	slices.Sort(samples)
	i := int(q*float64(len(samples))+0.5) - 1
	return samples[min(max(i, 0), len(samples)-1)].Nanoseconds()
}
