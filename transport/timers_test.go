package transport

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/qp"
)

// timeSlices models a process the scheduler runs for run out of every period, starting at offset:
// the stall function of hDevice.
func timeSlices(period, run, offset time.Duration) func(time.Time) time.Time {
	return func(t time.Time) time.Time {
		since := t.Sub(hStart) - offset
		if since < 0 {
			return hStart.Add(offset)
		}
		if since%period < run {
			return time.Time{}
		}
		return t.Add(period - since%period)
	}
}

// starvedTransfer sends msgs SENDs of size bytes from a to b at timeout 12 and retry_cnt 7 (8 x
// 16.8 ms without progress is fatal if every timeout counts) and requires all to succeed.
func starvedTransfer(t *testing.T, stallA, stallB func(time.Time) time.Time) (*hEndpoint, *hEndpoint) {
	h := newHarness(t)
	a, b := h.pair(hQPOptions{mtu: qp.MTU1024, timeout: 12})
	a.d.stall, b.d.stall = stallA, stallB
	b.d.service = 500 * time.Microsecond // a slice gets through a few packets only
	const msgs, size = 30, 4096
	src := a.d.region(size, 0)
	dst := b.d.region(size, 0)
	for i := range msgs {
		b.postRecv(uint64(i), dst.sge(0, size))
		a.post(qp.SendWR{ID: uint64(i), Opcode: qp.WRSend, Flags: qp.SendSignaled, SGList: []mr.SGE{src.sge(0, size)}})
	}
	h.runUntil(func() bool { return a.scq.Len() == msgs }, time.Hour)
	wcs := a.pollSend()
	require.Len(t, wcs, msgs)
	for _, wc := range wcs {
		require.Equal(t, cq.WCSuccess, wc.Status, "send %d after %v of fake time", wc.WRID, h.now.Sub(hStart))
	}
	t.Logf("%v of fake time, %d retransmissions, %d late timeouts", h.now.Sub(hStart).Round(time.Millisecond),
		a.d.count(counter.CompleterRetryErr), a.d.count(counter.LateTimeouts))
	return a, b
}

// TestRetransmitTimer runs the completer's retransmit timer where the host, not the network,
// is slow: expiries that only mean a process was not running must not use up retry_cnt.
func TestRetransmitTimer(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T)
	}{
		// An expiry within a timeout of the peer's last response is forgiven, one older is not, and
		// the allowance runs out.
		{"expiry soon after the peer last answered is forgiven", func(t *testing.T) {
			const timeout = 100 * time.Millisecond
			t0 := time.Unix(1000, 0)
			var c completer
			assert.False(t, c.busyExpiry(t0, timeout), "nothing heard yet")

			c.lateLeft, c.heard = 2, t0
			assert.True(t, c.busyExpiry(t0.Add(timeout-time.Millisecond), timeout), "heard within the timeout")
			assert.False(t, c.busyExpiry(t0.Add(timeout), timeout), "heard a whole timeout ago")
			assert.True(t, c.busyExpiry(t0.Add(time.Millisecond), timeout))
			assert.Zero(t, c.lateLeft)
			assert.False(t, c.busyExpiry(t0.Add(time.Millisecond), timeout), "allowance spent")
		}},
		// Both processes share a saturated host and run in short slices, the responder far less
		// often than the requester. The requester's retransmit timer keeps firing long after its
		// deadline, while its own process was not running; those expiries must not use up
		// retry_cnt, or the connection dies although nothing was lost.
		{"late expiries on a starved host are forgiven", func(t *testing.T) {
			a, _ := starvedTransfer(t, timeSlices(50*time.Millisecond, 2*time.Millisecond, 0),
				timeSlices(900*time.Millisecond, 5*time.Millisecond, 25*time.Millisecond))
			assert.NotZero(t, a.d.count(counter.LateTimeouts), "late expiries were forgiven")
		}},
		// The requester runs freely but its peer, a process on the same saturated host, gets the
		// CPU for 5 ms every 400 ms. The retransmit timeout backs off within the latitude IBTA
		// gives the timer (up to 4 T), so retry_cnt 7 outlasts the peer's stalls (27 T = 453 ms)
		// where 8 T (134 ms) would not, and the ACKs of each slice restore the full count.
		{"backoff outlasts a starved peer", func(t *testing.T) {
			a, _ := starvedTransfer(t, nil, timeSlices(400*time.Millisecond, 5*time.Millisecond, 100*time.Millisecond))
			assert.Zero(t, a.d.count(counter.RetryExceededErr))
		}},
	} {
		t.Run(tc.name, tc.run)
	}
}
