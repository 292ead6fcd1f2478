//go:build linux

package main

import (
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// pingSize is the ping-pong datagram: a 64-byte RoCE SEND.
const pingSize = 80

// warmup is the number of round trips before sampling starts.
const warmup = 1000

// pingSide is one end of the ping-pong: it sends one datagram and busy-polls for the next.
type pingSide interface {
	send(b []byte) error
	// recv polls once; it returns the length of a datagram read, or 0.
	recv() (int, error)
	// calls is the system calls made so far, and empty the polls among them that found nothing.
	calls() (calls, empty uint64)
	close()
}

// mmsgSide sends with sendmmsg and polls with recvmmsg(MSG_DONTWAIT), as netio does.
type mmsgSide struct {
	fd  int
	a   *arena
	in  *mmsgBatch
	out *mmsgBatch
}

func newMmsgSide(fd int) (pingSide, error) {
	a, err := newArena(1 << 20)
	if err != nil {
		return nil, err
	}
	return &mmsgSide{fd: fd, a: a, in: newBatch(a, 64, 2048, false), out: newBatch(a, 1, 2048, false)}, nil
}

func (s *mmsgSide) send(b []byte) error {
	copy(s.out.bufs[0], b)
	_, err := s.out.send(s.fd, 1, len(b), 0)
	return err
}

func (s *mmsgSide) recv() (int, error) {
	n, err := s.in.recv(s.fd)
	if n == 0 || err != nil {
		return 0, err
	}
	return int(s.in.hdrs[0].n), nil
}

func (s *mmsgSide) calls() (uint64, uint64) { return s.in.calls + s.out.calls, s.in.empty }
func (s *mmsgSide) close()                  { s.a.free() }

// uringSide sends with an IORING_OP_SEND per io_uring_enter and reads through a multishot
// receive, entering the kernel to poll only where the ring mode needs it.
type uringSide struct {
	r     *ring
	rx    *uringRx
	a     *arena
	fd    int
	out   []byte
	empty uint64
	got   int
}

func newUringSide(fd int, mode ringMode) (pingSide, error) {
	a, err := newArena(1 << 20)
	if err != nil {
		return nil, err
	}
	r, err := newRing(64, 1024, mode.flags)
	if err != nil {
		a.free()
		return nil, err
	}
	rx, err := newUringRx(r, mode, fd, a, false, 64, 2048)
	if err != nil {
		r.close()
		a.free()
		return nil, err
	}
	return &uringSide{r: r, rx: rx, a: a, fd: fd, out: a.bytes(2048)}, nil
}

func (s *uringSide) send(b []byte) error {
	n := copy(s.out, b)
	if err := s.r.queueSend(s.fd, s.out[:n]); err != nil {
		return err
	}
	return s.r.flushSends()
}

func (s *uringSide) recv() (int, error) {
	s.got = 0
	e0 := s.r.enters
	n, err := s.rx.poll(func(p []byte, _ int) { s.got = len(p) })
	if n == 0 && s.r.enters > e0 {
		s.empty++
	}
	return s.got, err
}

func (s *uringSide) calls() (uint64, uint64) { return s.r.enters, s.empty }
func (s *uringSide) close()                  { s.r.close(); s.a.free() }

// pingPong bounces one datagram between two busy-polling threads for cfg.duration; newSide
// builds each end on its own thread.
func pingPong(cfg config, label string, newSide func(fd int) (pingSide, error)) (pingPongRow, error) {
	row := pingPongRow{Path: label, DatagramBytes: pingSize}
	fa, fb, err := socketPair(cfg.src, cfg.dst)
	if err != nil {
		return row, err
	}
	defer unix.Close(fa)
	defer unix.Close(fb)

	var stop atomic.Bool
	type echoResult struct {
		calls, empty uint64
		err          error
	}
	echoReady := make(chan error, 1)
	echoDone := make(chan echoResult, 1)
	go func() {
		var res echoResult
		res.err = onThread(func() error {
			s, err := newSide(fb)
			echoReady <- err
			if err != nil {
				return err
			}
			defer s.close()
			buf := make([]byte, pingSize)
			for !stop.Load() {
				n, err := s.recv()
				if err != nil {
					return err
				}
				if n > 0 {
					if err := s.send(buf[:n]); err != nil {
						return err
					}
				}
			}
			res.calls, res.empty = s.calls()
			return nil
		})
		echoDone <- res
	}()
	if err := <-echoReady; err != nil {
		return row, err
	}

	var samples []time.Duration
	var calls, empty uint64
	rounds := 0
	err = onThread(func() error {
		s, err := newSide(fa)
		if err != nil {
			return err
		}
		defer s.close()
		msg := make([]byte, pingSize)
		round := func() (time.Duration, error) {
			t0 := time.Now()
			if err := s.send(msg); err != nil {
				return 0, err
			}
			for {
				n, err := s.recv()
				if err != nil {
					return 0, err
				}
				if n > 0 {
					return time.Since(t0), nil
				}
			}
		}
		for range warmup {
			if _, err := round(); err != nil {
				return err
			}
		}
		samples = make([]time.Duration, 0, 1<<20)
		start := time.Now()
		for time.Since(start) < cfg.duration {
			rtt, err := round()
			if err != nil {
				return err
			}
			samples = append(samples, rtt/2)
		}
		calls, empty = s.calls()
		rounds = warmup + len(samples)
		return nil
	})
	stop.Store(true)
	echo := <-echoDone
	if err == nil {
		err = echo.err
	}
	if err != nil {
		return row, err
	}
	row.Samples = len(samples)
	row.HalfRTTP50NS, row.HalfRTTP99NS = pct(samples, 0.5), pct(samples, 0.99)
	// Each round trip moves two datagrams; the echo's calls include its polls after the last.
	dg := float64(2 * rounds)
	row.SyscallsPerDatagram = float64(calls+echo.calls) / dg
	row.EmptyPollsPerDatagram = float64(empty+echo.empty) / dg
	return row, nil
}
