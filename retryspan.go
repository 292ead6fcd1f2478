package gorxe

import (
	"time"

	"github.com/gorxe/gorxe/transport"
)

// RetrySpan is the longest an RC QP with local ACK timeout code timeout (QPAttr.Timeout) and
// retry count retryCnt (QPAttr.RetryCnt) keeps resending a packet its peer leaves unanswered
// before the work request completes with WCRetryExcErr. The retransmit timer adapts to the
// measured round trip, within four times the encoded timeout per wait, so the span is at most
// (retryCnt + 1) × 4 × 4.096 µs × 2^timeout. It is 0 for timeout 0, whose QP never times out. A
// program that gives up on a silent peer by itself should wait at least this long, so that the
// transport's own verdict comes first.
func RetrySpan(timeout, retryCnt uint8) time.Duration { return transport.RetrySpan(timeout, retryCnt) }
