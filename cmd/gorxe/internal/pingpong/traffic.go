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

// spinFor is how long wait polls before it sleeps on a completion event. The C tools poll
// without end, which costs nothing while rxe runs in the kernel; here the transport shares the
// CPUs with the poller, and two busy peers on a small machine would starve it.
const spinFor = 5 * time.Microsecond

// wait returns the next completions, or none after a stale event. With -e it sleeps on a
// completion event, re-arms and polls once, as the C tools do; without it polls for a while, then
// arms the CQ and sleeps. It gives up after the session timeout without progress.
func (t *traffic) wait(ctx context.Context) (int, error) {
	s := t.s
	if !s.o.Events {
		if n := t.spin(); n > 0 {
			return n, nil
		}
		if err := s.cq.ReqNotify(false); err != nil {
			return 0, fmt.Errorf("Couldn't request CQ notification: %w", err)
		}
		// Completions that arrived before arming raise no event.
		if n := s.cq.Poll(t.wcs); n > 0 {
			return n, nil
		}
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
	if s.o.Events {
		if err := s.cq.ReqNotify(false); err != nil {
			return 0, fmt.Errorf("Couldn't request CQ notification: %w", err)
		}
	}
	return s.cq.Poll(t.wcs), nil
}

// spin polls the CQ for up to spinFor.
func (t *traffic) spin() int {
	var until time.Time
	for i := 0; ; i++ {
		if n := t.s.cq.Poll(t.wcs); n > 0 {
			return n
		}
		if i%64 == 63 {
			now := time.Now()
			if until.IsZero() {
				until = now.Add(spinFor)
			} else if now.After(until) {
				return 0
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
