package gorxe

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// queueFeeder is a Feeder over work queued in Go, as the C library queues it in its rings.
type queueFeeder struct {
	mu      sync.Mutex
	send    []SendWR
	settled []bool        // busy of each Settled call
	feeds   int           // Feed calls
	idle    chan struct{} // receives when a Settled call reports the engine idle
}

func (f *queueFeeder) Feed() ([]SendWR, []RecvWR) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.feeds++
	send := f.send
	f.send = nil
	return send, nil
}

func (f *queueFeeder) Pending() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.send) > 0
}

func (f *queueFeeder) Settled(busy, _ bool) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.settled = append(f.settled, busy)
	if !busy && f.idle != nil {
		select {
		case f.idle <- struct{}{}:
		default:
		}
	}
	return len(f.send) > 0
}

func (f *queueFeeder) queue(wr SendWR) {
	f.mu.Lock()
	f.send = append(f.send, wr)
	f.mu.Unlock()
}

// A QP's Feeder supplies its work when the engine runs: Kick starts it, the engine reports when
// it has gone idle, and a PostSend takes the feeder's queued work first, so the order of the two
// kinds of post holds.
func TestFeeder(t *testing.T) {
	a, b := fabricPair(t)
	qa, qb := rcPair(t, a, b, MTU1024)
	f := &queueFeeder{idle: make(chan struct{}, 1)}
	qa.SetFeeder(f)
	defer qa.SetFeeder(nil)
	for i := range 3 {
		require.NoError(t, qb.PostRecv([]RecvWR{{ID: uint64(i), SGList: b.sge(i*64, 64)}}))
	}
	copy(a.buf, "fed.posted.fed2")
	f.queue(SendWR{ID: 1, Opcode: WRSend, Flags: SendSignaled, SGList: a.sge(0, 3)})
	qa.Kick()
	assert.Equal(t, uint64(1), a.wait(t, 1)[0].WRID)
	// The completion can reach the CQ before the engine call that made it returns and settles.
	select {
	case <-f.idle:
	case <-time.After(10 * time.Second):
		t.Fatal("the engine never told its feeder it went idle")
	}

	// Queued, not kicked: the next PostSend takes it first.
	f.queue(SendWR{ID: 2, Opcode: WRSend, Flags: SendSignaled, SGList: a.sge(4, 6)})
	require.NoError(t, qa.PostSend([]SendWR{{ID: 3, Opcode: WRSend, Flags: SendSignaled, SGList: a.sge(11, 4)}}))
	var ids []uint64
	for _, wc := range a.wait(t, 2) {
		ids = append(ids, wc.WRID)
	}
	assert.Equal(t, []uint64{2, 3}, ids)
	got := b.wait(t, 3)
	require.Len(t, got, 3)
	assert.Equal(t, "fed", string(b.buf[0:3]))
	assert.Equal(t, "posted", string(b.buf[64:70]))
	assert.Equal(t, "fed2", string(b.buf[128:132]))
}

// The worker asks Pending before it takes the feeder's work: a feeder with nothing pending is not
// fed, however often its QP's engine runs.
func TestFeederPending(t *testing.T) {
	a, b := fabricPair(t)
	qa, qb := rcPair(t, a, b, MTU1024)
	f := &queueFeeder{}
	qa.SetFeeder(f)
	defer qa.SetFeeder(nil)
	const n = 4
	for i := range n {
		require.NoError(t, qa.PostRecv([]RecvWR{{ID: uint64(i), SGList: a.sge(i*64, 64)}}))
		require.NoError(t, qb.PostSend([]SendWR{{ID: uint64(i), Opcode: WRSend, Flags: SendSignaled, SGList: b.sge(0, 8)}}))
	}
	require.Len(t, b.wait(t, n), n)
	require.Len(t, a.wait(t, n), n)
	f.mu.Lock()
	defer f.mu.Unlock()
	assert.NotEmpty(t, f.settled, "the engine ran")
	assert.Zero(t, f.feeds, "fed with nothing pending")
}
