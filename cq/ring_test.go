package cq

import (
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// consume reads a ring the way a consumer outside Go does: the entries from Head up to Tail, then
// the new Head.
func consume(r Ring, max int) []RingEntry {
	tail, head := r.Header.Tail.Load(), r.Header.Head.Load()
	var out []RingEntry
	for ; head < tail && len(out) < max; head++ {
		out = append(out, r.Entries[head%uint64(len(r.Entries))])
	}
	r.Header.Head.Store(head)
	return out
}

func newRing(n int) Ring { return Ring{Header: new(RingHeader), Entries: make([]RingEntry, n)} }

func TestRingConsumerReadsInOrderAcrossWrap(t *testing.T) {
	r := newRing(3)
	c, err := NewRing(r, Options{})
	require.NoError(t, err)
	var q Freed
	next, want := uint64(0), uint64(0)
	for range 10 {
		for range 2 {
			require.NoError(t, c.Push(wcID(next), false, q.Token(2)))
			next++
		}
		got := consume(r, 2)
		require.Len(t, got, 2)
		for _, e := range got {
			require.Equal(t, want, e.WC.WRID)
			require.Equal(t, uint32(2), e.Slots, "slots the poll frees")
			want++
		}
	}
	// The slots went back to the queue as each completion was pushed: the consumer counts them.
	assert.Equal(t, uint64(40), q.Load(), "freed")
	assert.Zero(t, c.Len())
}

func TestRingOverrunSetsHeader(t *testing.T) {
	r := newRing(2)
	c, err := NewRing(r, Options{})
	require.NoError(t, err)
	require.NoError(t, c.Push(wcID(1), false, Token{}))
	require.NoError(t, c.Push(wcID(2), false, Token{}))
	require.ErrorIs(t, c.Push(wcID(3), false, Token{}), ErrOverflow)
	assert.Equal(t, uint32(1), r.Header.Overrun.Load())
	assert.Len(t, consume(r, 8), 2, "the queued completions stay readable")
}

func TestRingNotifyArmedByConsumer(t *testing.T) {
	ch := NewCompChannel(nil)
	r := newRing(8)
	c, err := NewRing(r, Options{Channel: ch})
	require.NoError(t, err)
	require.NoError(t, c.Push(wcID(1), false, Token{}))
	assert.True(t, ch.empty(), "not armed: no event")
	r.Header.Notify.Store(RingNotifySolicited) // ibv_req_notify_cq(cq, 1) in C
	require.NoError(t, c.Push(wcID(2), false, Token{}))
	assert.True(t, ch.empty(), "an unsolicited success does not fire a solicited arm")
	require.NoError(t, c.Push(wcID(3), true, Token{}))
	assert.False(t, ch.empty(), "a solicited completion fires it")
	assert.Equal(t, uint32(RingNotifyNone), r.Header.Notify.Load(), "disarmed")
}

func TestRingResize(t *testing.T) {
	r := newRing(4)
	c, err := NewRing(r, Options{})
	require.NoError(t, err)
	for i := range 4 {
		require.NoError(t, c.Push(wcID(uint64(i)), false, Token{}))
	}
	consume(r, 1)
	assert.ErrorIs(t, c.Resize(8), ErrInvalidSize, "Resize would leave the consumer's memory")
	assert.ErrorIs(t, c.ResizeRing(newRing(2)), ErrInvalidSize, "too small for 3 queued")
	bigger := newRing(8)
	require.NoError(t, c.ResizeRing(bigger))
	require.NoError(t, c.Push(wcID(4), false, Token{}))
	var ids []uint64
	for _, e := range consume(bigger, 8) {
		ids = append(ids, e.WC.WRID)
	}
	assert.Equal(t, []uint64{1, 2, 3, 4}, ids)
	assert.ErrorIs(t, mustNew(t, 2, Options{}).ResizeRing(newRing(4)), ErrInvalidSize, "a Go CQ resizes with Resize")
}

func TestRingConcurrentProducersAndConsumer(t *testing.T) {
	const producers, each = 4, 2000
	r := newRing(16)
	c, err := NewRing(r, Options{})
	require.NoError(t, err)
	var wg sync.WaitGroup
	var q Freed
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each producer keeps at most 16/producers completions unpolled, as a queue of
			// that depth would, so the ring never overruns.
			for i := range each {
				for c.Len() >= 16/producers {
					runtime.Gosched()
				}
				assert.NoError(t, c.Push(wcID(uint64(p*each+i)), false, q.Token(1)))
			}
		}()
	}
	seen := 0
	for seen < producers*each {
		n := len(consume(r, 16))
		if n == 0 {
			runtime.Gosched()
		}
		seen += n
	}
	wg.Wait()
	assert.Equal(t, uint64(producers*each), q.Load())
}

// The C library's poll_cq reads these fields at these offsets (clib checks its side at build time).
func TestRingLayout(t *testing.T) {
	var h RingHeader
	var e RingEntry
	assert.Equal(t, uintptr(0), unsafe.Offsetof(h.Tail))
	assert.Equal(t, uintptr(64), unsafe.Offsetof(h.Head))
	assert.Equal(t, uintptr(128), unsafe.Offsetof(h.Notify))
	assert.Equal(t, uintptr(132), unsafe.Offsetof(h.Overrun))
	assert.Equal(t, uintptr(48), unsafe.Offsetof(e.Slots))
	assert.Equal(t, uintptr(56), unsafe.Sizeof(e))
}
