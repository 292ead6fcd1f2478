package pingpong

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
)

// ErrStalled: no completion arrived within the timeout; the peer stopped or packets were lost.
var ErrStalled = errors.New("no completion")

// traffic is the state of the ping-pong loop, the C tools' counters.
type traffic struct {
	s          *session
	iters      int
	pending    []int // per QP: OR of the work request IDs it waits for
	routs      int   // receives posted and not yet completed
	rearmAt    int   // repost receives once routs falls to this
	scnt, rcnt int
	cqEvents   int
	wcs        []gorxe.WC
}

// run drives the exchanges until iters sends and iters receives have completed. The client posts
// the first SEND of every QP; after that each QP sends again once both its previous SEND and the
// peer's answer have completed.
func (t *traffic) run(ctx context.Context, client bool) error {
	s := t.s
	for i := range t.pending {
		t.pending[i] = recvWRID
		if client {
			if err := s.postSend(i); err != nil {
				return fmt.Errorf("Couldn't post send: %w", err)
			}
			t.pending[i] |= sendWRID
		}
	}
	for t.rcnt < t.iters || t.scnt < t.iters {
		n, err := t.wait(ctx)
		if err != nil {
			return err
		}
		for _, wc := range t.wcs[:n] {
			if err := t.complete(&wc); err != nil {
				return err
			}
		}
	}
	return nil
}

// complete handles one completion as the C tools do.
func (t *traffic) complete(wc *gorxe.WC) error {
	s := t.s
	if wc.Status != gorxe.WCSuccess {
		return fmt.Errorf("Failed status %s (%d) for wr_id %d", wc.Status, int(wc.Status), int(wc.WRID))
	}
	qi := -1
	for i, q := range s.qps {
		if q.QPN() == wc.QPNum {
			qi = i
			break
		}
	}
	if qi < 0 {
		return fmt.Errorf("Couldn't find QPN %06x", wc.QPNum)
	}
	switch wc.WRID {
	case sendWRID:
		t.scnt++
	case recvWRID:
		if t.routs--; t.routs <= t.rearmAt {
			t.routs += s.postRecv(s.o.RxDepth - t.routs)
			if t.routs < s.o.RxDepth {
				return fmt.Errorf("Couldn't post receive (%d)", t.routs)
			}
		}
		t.rcnt++
	default:
		return fmt.Errorf("Completion for unknown wr_id %d", int(wc.WRID))
	}
	t.pending[qi] &^= int(wc.WRID)
	if t.scnt < t.iters && t.pending[qi] == 0 {
		if err := s.postSend(qi); err != nil {
			return fmt.Errorf("Couldn't post send: %w", err)
		}
		t.pending[qi] = recvWRID | sendWRID
	}
	return nil
}

// wait returns the next completions, or none after a stale event, as the C tools wait: with -e
// it sleeps on a completion event, re-arms and polls once; without it it polls until completions
// arrive (poll). It gives up after the session timeout without progress.
func (t *traffic) wait(ctx context.Context) (int, error) {
	s := t.s
	if !s.o.Events {
		return t.poll(ctx)
	}
	wctx, cancel := ctx, context.CancelFunc(func() {})
	if s.o.Timeout > 0 {
		wctx, cancel = context.WithTimeout(ctx, s.o.Timeout)
	}
	_, err := s.channel.GetEvent(wctx)
	cancel()
	if err != nil {
		return 0, t.stalled(ctx, err)
	}
	t.cqEvents++
	if err := s.cq.ReqNotify(false); err != nil {
		return 0, fmt.Errorf("Couldn't request CQ notification: %w", err)
	}
	return s.cq.Poll(t.wcs), nil
}

// pollCheckEvery is how many empty polls go between two looks at the clock and the context.
const pollCheckEvery = 64

// poll polls the CQ until it has completions. The device runs in latency mode without -e
// (selection), so a poll that finds the CQ empty reads the network itself and the transport
// runs on this goroutine, as the C tools' polls leave rxe's to the kernel; each empty poll also
// yields the processor to the device's goroutines. Polling 5 µs and then sleeping on a
// completion event instead made a round trip 92-138 µs where rdma-core's ibv_rc_pingpong on
// gorxe's C library, which polls, makes 30 µs.
func (t *traffic) poll(ctx context.Context) (int, error) {
	var deadline time.Time
	if t.s.o.Timeout > 0 {
		deadline = time.Now().Add(t.s.o.Timeout)
	}
	for i := 1; ; i++ {
		if n := t.s.cq.Poll(t.wcs); n > 0 {
			return n, nil
		}
		if i%pollCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return 0, t.stalled(ctx, err)
			}
			if !deadline.IsZero() && time.Now().After(deadline) {
				return 0, t.stalled(ctx, context.DeadlineExceeded)
			}
		}
		runtime.Gosched()
	}
}

// stalled explains why waiting for a completion ended.
func (t *traffic) stalled(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w after %d sends and %d receives of %d", tool.ErrInterrupted, t.scnt, t.rcnt, t.iters)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w for %v after %d sends and %d receives of %d: the peer stopped, or packets were lost",
			ErrStalled, t.s.o.Timeout, t.scnt, t.rcnt, t.iters)
	}
	return fmt.Errorf("Failed to get cq_event: %w", err)
}
