package rping

import (
	"context"
	"errors"
	"fmt"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm/rdmacm"
)

// errDisconnected: the QP was flushed, because the peer disconnected.
var errDisconnected = errors.New("disconnected")

// queues posts a connection's work and collects its completions, keeping count of the signaled
// sends still outstanding so the send queue never overflows.
type queues struct {
	qp      *gorxe.QP
	sendCQ  *gorxe.CQ
	recvCQ  *gorxe.CQ
	pending int // sends posted and not yet completed
	wcs     []gorxe.WC
}

func newQueues(c *rdmacm.Conn) *queues {
	return &queues{qp: c.QP(), sendCQ: c.SendCQ(), recvCQ: c.RecvCQ(), wcs: make([]gorxe.WC, sqDepth)}
}

// post posts a signaled send, first collecting completions if the send queue is full.
func (q *queues) post(wr gorxe.SendWR) error {
	if err := q.reap(context.Background(), false); err != nil {
		return err
	}
	for q.pending >= sqDepth {
		if err := q.reap(context.Background(), true); err != nil {
			return err
		}
	}
	if err := q.qp.PostSend([]gorxe.SendWR{wr}); err != nil {
		return err
	}
	q.pending++
	return nil
}

func (q *queues) postRecv(wr gorxe.RecvWR) error { return q.qp.PostRecv([]gorxe.RecvWR{wr}) }

// sendAndWait posts wr and waits for its completion.
func (q *queues) sendAndWait(ctx context.Context, wr gorxe.SendWR) error {
	if err := q.post(wr); err != nil {
		return err
	}
	for {
		n := q.sendCQ.Poll(q.wcs)
		for _, wc := range q.wcs[:n] {
			q.pending--
			if err := check(wc); err != nil {
				return err
			}
			if wc.WRID == wr.ID {
				return nil
			}
		}
		if n == 0 {
			if err := q.sendCQ.Wait(ctx); err != nil {
				return err
			}
		}
	}
}

// reap collects send completions; with block it waits for at least one.
func (q *queues) reap(ctx context.Context, block bool) error {
	for {
		n := q.sendCQ.Poll(q.wcs)
		for _, wc := range q.wcs[:n] {
			q.pending--
			if err := check(wc); err != nil {
				return err
			}
		}
		if n > 0 || !block {
			return nil
		}
		if err := q.sendCQ.Wait(ctx); err != nil {
			return err
		}
	}
}

// recv waits for the control message. A flushed receive means the QP went to the error state:
// the peer disconnected, unless a send failed first, whose error is returned instead.
func (q *queues) recv(ctx context.Context) error {
	wc := make([]gorxe.WC, 1)
	for q.recvCQ.Poll(wc) == 0 {
		if err := q.recvCQ.Wait(ctx); err != nil {
			return err
		}
	}
	if err := check(wc[0]); err != nil {
		if errors.Is(err, errDisconnected) {
			if serr := q.reap(ctx, false); serr != nil && !errors.Is(serr, errDisconnected) {
				return serr
			}
		}
		return err
	}
	if wc[0].ByteLen != infoSize {
		return fmt.Errorf("Received bogus data, size %d", wc[0].ByteLen)
	}
	return q.reap(ctx, false)
}

// check turns an unsuccessful completion into an error.
func check(wc gorxe.WC) error {
	switch wc.Status {
	case gorxe.WCSuccess:
		return nil
	case gorxe.WCWRFlushErr:
		return errDisconnected
	}
	return fmt.Errorf("cq completion failed status %d (%v)", wc.Status, wc.Status)
}
