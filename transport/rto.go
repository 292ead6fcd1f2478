package transport

import (
	"time"

	"github.com/gorxe/gorxe/packet"
)

// The retransmit timeout adapts to the measured round trip, within the latitude IBTA gives the
// transport timer.
//
// The Local ACK Timeout encodes T = 4.096 µs × 2^timeout, the least time the requester waits for
// an acknowledgement before it counts a retry (IBTA 9.7.6.1.3); an implementation's timer may run
// longer than the encoded value. gorxe waits T while round trips are short next to it, and up to
// maxRTOFactor × T when they are not, using the smoothed round trip and its variation as TCP does
// (RFC 6298: srtt + 4 × rttvar). A responder that is alive but slow — a software stack on the same
// saturated host, starved by the scheduler for a while — then gets up to four times as long before
// retry_cnt runs out, while a QP whose peer answers quickly keeps the configured timeout exactly.
// Samples follow Karn's rule: one packet is timed at a time, and a retransmission cancels the
// measurement, since its acknowledgement could answer either copy. So that a responder that went
// silent (no sample can complete) still gets the latitude, each retransmission timeout doubles
// the timeout until the next progress, again within [T, maxRTOFactor × T]: retry_cnt 7 at timeout
// 12 lasts 27 T (453 ms) without any answer instead of 8 T (134 ms), and still ends.

// maxRTOFactor bounds the adapted timeout to this multiple of the encoded one. The spec lets the
// timer run longer than T without naming an upper bound gorxe relies on; four times keeps the
// stretch within the range the spec's timer tolerance is usually read as, and keeps a dead peer
// detected within a bounded, predictable time (27 T for retry_cnt 7).
const maxRTOFactor = 4

// RetrySpan bounds how long an RC requester with Local ACK Timeout code timeout and retry count
// retryCnt keeps resending a packet nobody answers before the work request fails with
// RETRY_EXC_ERR: the first transmission's timeout and one per retry, each at most maxRTOFactor
// times the encoded timeout (27 T for retry_cnt 7 when no round trip was ever measured, 32 T at
// most). It is 0 for timeout 0, whose requester never times out.
func RetrySpan(timeout, retryCnt uint8) time.Duration {
	return time.Duration(int64(retryCnt&7)+1) * maxRTOFactor * ackTimeout(timeout)
}

// rttTimer is the one round-trip measurement in progress and the estimate so far.
type rttTimer struct {
	psn     packet.PSN // the packet being timed
	at      time.Time  // when it was sent; zero when nothing is timed
	srtt    time.Duration
	rttvar  time.Duration
	backoff uint8 // doublings after timeouts without progress since
}

// start times psn, sent at now, unless a measurement is under way.
func (t *rttTimer) start(psn packet.PSN, now time.Time) {
	if t.at.IsZero() {
		t.psn, t.at = psn, now
	}
}

// cancel drops the measurement in progress (Karn: a retransmission makes it ambiguous).
func (t *rttTimer) cancel() { t.at = time.Time{} }

// acked takes a sample when everything before psn is acknowledged and covers the timed packet.
func (t *rttTimer) acked(psn packet.PSN, now time.Time) {
	if t.at.IsZero() || !t.psn.LessThan(psn) {
		return
	}
	r := now.Sub(t.at)
	t.at = time.Time{}
	if r < 0 {
		return
	}
	if t.srtt == 0 {
		t.srtt, t.rttvar = r, r/2
		return
	}
	d := t.srtt - r
	if d < 0 {
		d = -d
	}
	t.rttvar = (3*t.rttvar + d) / 4
	t.srtt = (7*t.srtt + r) / 8
}

// rto returns the retransmit timeout for encoded timeout base: base, or the adapted and backed-off
// estimate clamped to [base, maxRTOFactor × base].
func (t *rttTimer) rto(base time.Duration) time.Duration {
	return min(max(base, t.srtt+4*t.rttvar)<<t.backoff, maxRTOFactor*base)
}

// timedOut doubles the timeout after a retransmission timeout (up to the clamp).
func (t *rttTimer) timedOut() {
	if t.backoff < 2 {
		t.backoff++
	}
}

// progress ends the back-off: the responder answered.
func (t *rttTimer) progress() { t.backoff = 0 }

// reset forgets the estimate (a new connection).
func (t *rttTimer) reset() { *t = rttTimer{} }
