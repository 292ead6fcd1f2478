package transport

import "time"

// Late retransmit timers.
//
// retry_cnt counts Local ACK Timeout expiries without progress (IBTA 9.7.6.1.3): each one is
// evidence that the responder, or the path to it, did not answer within the timeout. That evidence
// only holds if this side was running while the timeout ran. A software stack can be descheduled:
// a host whose CPUs are saturated by other processes runs gorxe's goroutines tens or hundreds of
// milliseconds late, and then the retransmit timer fires long after its deadline while the
// acknowledgements that arrived meanwhile still wait, unread, in the socket. Counting that expiry
// would spend retry_cnt on the local scheduler, not on the peer or the network: a busy machine lost
// every connection of a soak run to RETRY_EXC_ERR at timeout 12 (8 x 16.8 ms without progress).
//
// So an expiry noticed late — at least half a timeout (and at least lateSlackMin) after its
// deadline — is not counted and sends nothing: the timer is armed for a whole timeout from now,
// which gives the packets queued during the stall their turn first. If they acknowledge progress,
// nothing was lost; if not, the next expiry, on time, counts as usual. The transport timer then
// runs longer than 4.096 µs × 2^timeout, which IBTA permits (the encoded value is the least the
// timer may wait, and an implementation may wait longer); the spec's meaning of retry_cnt is kept:
// 7 is seven retries, not "forever" as in kernel rxe.
//
// A busy responder is the same case seen from the other side: an expiry while the peer was still
// sending this QP responses within the last timeout — stale ones included, such as a kernel rxe
// in an emulated machine working through the READ responses of duplicate requests — shows the
// responder alive and behind, not the request lost. Retrying then only queues another whole READ
// response behind the ones it is still sending, and each retry spent on that brings the QP closer
// to RETRY_EXC_ERR without any loss. So such an expiry re-arms the timer too (busyExpiry). A lost
// packet is still found at once: a gap in READ responses or a sequence NAK retries without
// waiting for the timer.
//
// A process starved for good, or a peer that only ever sends stale responses, must still give up
// on a dead connection: at most maxLateExpiries late or busy expiries in a row are forgiven, after
// which they count too. Progress resets the allowance.

const (
	// lateSlackMin is the least lateness that makes an expiry late, above timer and scheduling
	// jitter on an idle machine, which matters for timeouts of a millisecond or less.
	lateSlackMin = time.Millisecond
	// maxLateExpiries bounds the consecutive late expiries not counted against retry_cnt.
	maxLateExpiries = 16
)

// lateExpiry reports whether the retransmit timer, due at deadline and noticed at now, fired so
// late that this side was evidently not running, and consumes one of the forgiven expiries.
func (c *completer) lateExpiry(now, deadline time.Time) bool {
	slack := max(c.e.req.a.timeout/2, lateSlackMin)
	if now.Sub(deadline) < slack || c.lateLeft == 0 {
		return false
	}
	c.lateLeft--
	return true
}

// busyExpiry reports whether the retransmit timer expired while the responder was evidently busy:
// it sent this QP a response, new or stale, within the last timeout. It consumes one of the
// forgiven expiries.
func (c *completer) busyExpiry(now time.Time, timeout time.Duration) bool {
	if c.lateLeft == 0 || c.heard.IsZero() || now.Sub(c.heard) >= timeout {
		return false
	}
	c.lateLeft--
	return true
}
