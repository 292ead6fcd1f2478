package gorxe

import "context"

// Wait blocks until the CQ holds at least one completion to Poll, the CQ fails (ErrCQOverflow,
// ErrDestroyed), the device is closed (ErrDeviceClosed, once the completions Close flushed are
// polled) or ctx ends. It spares callers the ReqNotify, re-poll, GetEvent, AckEvents dance: it arms
// the CQ as it finds it empty, so no completion slips between the check and the arming, and
// acknowledges each event it takes. The CQ needs a completion channel of its own: Wait consumes the
// channel's events, so a channel shared with CQs that others wait on would lose their wake-ups to
// this one.
//
// Destroying the CQ while Wait blocks succeeds and wakes it with ErrDestroyed: Wait holds no event
// the caller must acknowledge, so there is nothing to refuse the Destroy for.
func (c *CQ) Wait(ctx context.Context) error {
	return opErr("wait_cq", c.cq.Wait(ctx))
}
