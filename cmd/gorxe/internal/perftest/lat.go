package perftest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"time"

	"github.com/gorxe/gorxe"
)

func (r *rdma) lat(ctx context.Context, size int) (latResult, error) {
	l := &latRun{r: r, size: size, w: newWaiter(ctx, r.p, r.stall(size))}
	defer l.w.close()
	l.iters = r.p.Iters
	if r.p.Duration > 0 {
		l.timed, l.win, l.iters = true, newWindow(r.p), math.MaxInt32
	} else {
		l.starts = make([]int64, l.iters)
	}
	l.origin = time.Now()
	var err error
	switch r.p.Test.Verb {
	case VerbWrite:
		err = l.write()
	case VerbSend:
		err = l.send()
	default:
		err = l.read()
	}
	if errors.Is(err, errEnd) {
		err = nil
	}
	if err != nil && ctx.Err() != nil {
		return l.partial(), &InterruptedError{Done: max(l.begun-1, 0), Total: r.p.Iters, Unit: "iterations", Cause: context.Cause(ctx)}
	}
	if err != nil {
		return latResult{}, err
	}
	if l.timed {
		return latResult{iters: l.sampled, elapsed: l.win.sampleTo.Sub(l.win.sampleFrom)}, nil
	}
	return latResult{starts: l.starts, iters: l.iters}, nil
}

// latRun is one latency measurement: a message at a time, each iteration timestamped when it
// starts (perftest's tposted).
type latRun struct {
	r      *rdma
	size   int
	w      *waiter
	iters  int
	timed  bool
	win    window
	starts []int64
	origin time.Time
	// sampled counts the iterations of a timed run that started in the sampled window.
	sampled int
	wcs     [1]gorxe.WC
	// sendDone counts send completions reaped early, while waiting for the peer.
	sendDone int
	// begun counts the iterations started.
	begun int
}

// partial is the result of the iterations an interrupted run completed: every iteration but the
// last one started, whose end the next start would have marked.
func (l *latRun) partial() latResult {
	if l.timed {
		return latResult{iters: l.sampled, elapsed: max(earlier(time.Now(), l.win.sampleTo).Sub(l.win.sampleFrom), 0)}
	}
	return latResult{starts: l.starts[:l.begun], iters: max(l.begun-1, 0)}
}

// begin timestamps iteration i, waiting first for the --latency_gap.
func (l *latRun) begin(i int) {
	if gap := l.r.p.LatencyGap; gap > 0 {
		until := time.Now().Add(time.Duration(gap) * time.Microsecond)
		for time.Now().Before(until) {
			runtime.Gosched()
		}
	}
	now := time.Now()
	l.begun++
	if l.timed {
		if l.win.sampling(now) {
			l.sampled++
		}
		return
	}
	l.starts[i] = int64(now.Sub(l.origin)) + 1
}

// over reports whether a timed run has reached its end.
func (l *latRun) over() bool { return l.timed && !time.Now().Before(l.win.end) }

// end returns the end of a timed run, or the zero time.
func (l *latRun) end() time.Time {
	if l.timed {
		return l.win.end
	}
	return time.Time{}
}

// waitSend waits for the completion of the side's one outstanding send.
func (l *latRun) waitSend(scnt, ccnt int) error {
	if l.sendDone > 0 {
		l.sendDone--
		return nil
	}
	if _, err := l.w.poll(l.r.sendCQ, l.r.sendCh, l.wcs[:], l.end()); err != nil {
		return l.stalled(err, "completion of a send")
	}
	if l.wcs[0].Status != gorxe.WCSuccess {
		return wcError(l.side(), &l.wcs[0], scnt, ccnt)
	}
	return nil
}

// reapSend collects a send completion that arrived while the side waits for the peer, so that an
// error (the peer is gone) ends the wait.
func (l *latRun) reapSend() error {
	var wc [1]gorxe.WC
	if l.r.sendCQ.Poll(wc[:]) == 0 {
		return nil
	}
	if wc[0].Status != gorxe.WCSuccess {
		return wcError(l.side(), &wc[0], 0, 0)
	}
	l.sendDone++
	return nil
}

func (l *latRun) side() string {
	if l.r.p.IsServer() {
		return "server"
	}
	return "client"
}

// stalled turns a waiter error into the run's error.
func (l *latRun) stalled(err error, what string) error {
	if errors.Is(err, errStalled) {
		return fmt.Errorf("no %s for %v: is the peer still there?", what, l.w.stall.Round(time.Millisecond))
	}
	return err
}

// write is ib_write_lat's ping-pong (perftest's run_iter_lat_write): each side RDMA-writes the
// message into the other's buffer with the iteration number in its last byte, and waits for the
// peer's write by watching the last byte of its own buffer. The server writes first.
func (l *latRun) write() error {
	r := l.r
	q, rem := r.qps[0], &r.remote[0]
	post := l.size - 1
	poll := len(r.qps)*r.area + l.size - 1
	sge := [1]gorxe.SGE{{Addr: r.mrAddr, Length: uint32(l.size), LKey: r.lkey}}
	wr := [1]gorxe.SendWR{{Opcode: gorxe.WRRDMAWrite, Flags: gorxe.SendSignaled, SGList: sge[:],
		RDMA: gorxe.RDMAInfo{RemoteAddr: rem.VAddr, RKey: rem.RKey}}}
	if l.size <= r.p.Inline {
		wr[0].Flags |= gorxe.SendInline
		wr[0].InlineData, wr[0].SGList = r.mem[:l.size], nil
	}
	server := r.p.IsServer()
	scnt, ccnt, rcnt := 0, 0, 0
	for (scnt < l.iters || ccnt < l.iters || rcnt < l.iters) && !l.over() {
		if rcnt < l.iters && !(scnt < 1 && server) {
			rcnt++
			if err := l.w.waitByte(r.mem, poll, byte(rcnt), l.end(), l.reapSend); err != nil {
				return l.stalled(err, "message from the peer")
			}
		}
		if scnt < l.iters {
			l.begin(scnt)
			scnt++
			r.mem[post] = byte(scnt)
			if err := q.PostSend(wr[:]); err != nil {
				return stepErr(err, "Couldn't post send: scnt=%d", scnt)
			}
		}
		if ccnt < l.iters {
			if err := l.waitSend(scnt, ccnt); err != nil {
				return err
			}
			ccnt++
		}
	}
	return nil
}

// read is the client of ib_read_lat and ib_atomic_lat (perftest's run_iter_lat): one READ or
// atomic at a time, each waited for. The server only serves them.
func (l *latRun) read() error {
	r := l.r
	var wr [1]gorxe.SendWR
	var sge [1]gorxe.SGE
	r.fillWR(&wr[0], sge[:], 0, 0, l.size, cycle{slots: 1}, true)
	for scnt := 0; scnt < l.iters && !l.over(); {
		l.begin(scnt)
		scnt++
		if err := r.qps[0].PostSend(wr[:]); err != nil {
			return stepErr(err, "Couldn't post send: scnt=%d", scnt)
		}
		if err := l.waitSend(scnt, scnt-1); err != nil {
			return err
		}
	}
	return nil
}

// send is ib_send_lat's ping-pong (perftest's run_iter_lat_send): each side SENDs a message and
// waits to receive the peer's; the client sends first.
func (l *latRun) send() error {
	r := l.r
	var wr [1]gorxe.SendWR
	var sge [1]gorxe.SGE
	r.fillWR(&wr[0], sge[:], 0, 0, l.size, cycle{slots: 1}, true)
	client := !r.p.IsServer()
	scnt, rcnt := 0, 0
	for (scnt < l.iters || rcnt < l.iters) && !l.over() {
		if rcnt < l.iters && !(scnt < 1 && client) {
			if _, err := l.w.poll(r.recvCQ, r.recvCh, l.wcs[:], l.end()); err != nil {
				return l.stalled(err, "message from the peer")
			}
			if l.wcs[0].Status != gorxe.WCSuccess {
				return wcError(l.side(), &l.wcs[0], scnt, rcnt)
			}
			rcnt++
			if l.timed || r.rposted[0] < l.iters {
				if err := r.postRecv(0, l.size); err != nil {
					return err
				}
			}
		}
		if scnt < l.iters {
			l.begin(scnt)
			scnt++
			if err := r.qps[0].PostSend(wr[:]); err != nil {
				return stepErr(err, "Couldn't post send: scnt=%d", scnt)
			}
			if err := l.waitSend(scnt, scnt-1); err != nil {
				return err
			}
		}
	}
	return nil
}
