package gorxe

import (
	"context"
	"errors"
)

// ErrNoChannel: CQ.Wait was called on a CQ created without a completion channel, so nothing can
// wake it.
var ErrNoChannel = errors.New("gorxe: CQ has no completion channel")

// Wait blocks until the CQ holds at least one completion to Poll, the CQ fails (overflow,
// destroyed) or ctx ends. It spares callers the ReqNotify, re-poll, GetEvent, AckEvents dance:
// it arms the CQ, checks again for a completion that arrived before the arming (the race every
// hand-written loop must close), and acknowledges each event it takes. The CQ needs a completion
// channel of its own: Wait consumes the channel's events, so a channel shared with CQs that
// others wait on would lose their wake-ups to this one.
func (c *CQ) Wait(ctx context.Context) error {
	const op = "wait_cq"
	if c.ch == nil {
		return &Error{Op: op, Err: ErrNoChannel}
	}
	for {
		if c.cq.Len() > 0 {
			return nil
		}
		if err := c.Err(); err != nil {
			return err
		}
		if err := c.ReqNotify(false); err != nil {
			return err
		}
		if c.cq.Len() > 0 {
			return nil
		}
		got, err := c.ch.GetEvent(ctx)
		if err != nil {
			return err
		}
		if err := got.AckEvents(1); err != nil {
			return err
		}
	}
}
