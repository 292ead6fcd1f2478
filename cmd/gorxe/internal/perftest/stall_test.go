package perftest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A bandwidth client on RC waits for its completions as long as its QP may still be retrying,
// (retry_cnt + 1) × 4 × the ACK timeout on top of --timeout, so that RETRY_EXC_ERR, not the
// watchdog, ends a run against a peer that stopped answering. Receivers, UC and UD, and
// --timeout=0 are unchanged.
func TestRequesterStall(t *testing.T) {
	const size = 1 << 20 // one second at slowestRate
	ackTimeout18 := 4096 * time.Nanosecond << 18
	for _, tc := range []struct {
		name string
		p    Params
		want time.Duration
	}{
		{"RC -u 18", Params{Timeout: 10 * time.Second, Conn: RC, QPTimeout: 18}, 11*time.Second + 8*4*ackTimeout18},
		{"RC -R --retry_count 2", Params{Timeout: 10 * time.Second, Conn: RC, QPTimeout: 18, RDMACM: true, RetryCount: 2},
			11*time.Second + 3*4*ackTimeout18},
		{"RC -u 0: no ACK timer", Params{Timeout: 10 * time.Second, Conn: RC}, 11 * time.Second},
		{"UC", Params{Timeout: 10 * time.Second, Conn: UC, QPTimeout: 18}, 11 * time.Second},
		{"--timeout=0", Params{Conn: RC, QPTimeout: 18}, 1 << 62},
	} {
		r := &rdma{p: &tc.p}
		assert.Equal(t, tc.want, r.requesterStall(size), tc.name)
	}
	r := &rdma{p: &Params{Timeout: 10 * time.Second, Conn: RC, QPTimeout: 18}}
	assert.Equal(t, 11*time.Second, r.stall(size), "the receiving side's limit stays --timeout plus transfer time")
}
