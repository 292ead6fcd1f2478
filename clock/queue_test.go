package clock

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The queue must hand back entries sorted by deadline, ties in push order, whatever the push order.
func TestQueueOrdersByDeadlineThenPushOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	base := time.Unix(0, 0)
	type ent struct {
		at  time.Time
		seq int
	}
	var q Queue[int]
	var want []ent
	for i := range 1000 {
		at := base.Add(time.Duration(rng.IntN(50)) * time.Millisecond) // many ties
		q.Push(at, i)
		want = append(want, ent{at, i})
		if rng.IntN(4) == 0 { // interleave pops with pushes
			slices.SortStableFunc(want, func(a, b ent) int { return a.at.Compare(b.at) })
			at, v, ok := q.Pop()
			require.True(t, ok, "Pop = %v %d %v, want %v %d", at, v, ok, want[0].at, want[0].seq)
			require.True(t, at.Equal(want[0].at), "Pop = %v %d %v, want %v %d", at, v, ok, want[0].at, want[0].seq)
			require.Equal(t, want[0].seq, v, "Pop = %v %d %v, want %v %d", at, v, ok, want[0].at, want[0].seq)
			want = want[1:]
		}
	}
	slices.SortStableFunc(want, func(a, b ent) int { return a.at.Compare(b.at) })
	for _, w := range want {
		pat, pv, _ := q.Peek()
		at, v, ok := q.Pop()
		require.True(t, ok, "Pop = %v %d %v, want %v %d", at, v, ok, w.at, w.seq)
		require.True(t, at.Equal(w.at), "Pop = %v %d %v, want %v %d", at, v, ok, w.at, w.seq)
		require.Equal(t, w.seq, v, "Pop = %v %d %v, want %v %d", at, v, ok, w.at, w.seq)
		require.True(t, pat.Equal(at), "Pop = %v %d %v, want %v %d", at, v, ok, w.at, w.seq)
		require.Equal(t, v, pv, "Pop = %v %d %v, want %v %d", at, v, ok, w.at, w.seq)
	}
	_, _, ok := q.Pop()
	assert.False(t, ok || q.Len() != 0, "queue not empty at the end")
}

func TestQueuePushDoesNotAllocateOnceGrown(t *testing.T) {
	var q Queue[*int]
	v := new(int)
	at := time.Unix(1, 0)
	for range 64 {
		q.Push(at, v)
	}
	q.Reset()
	n := testing.AllocsPerRun(100, func() {
		q.Push(at, v)
		q.Pop()
	})
	assert.Equal(t, float64(0), n, "Push+Pop allocates %v times", n)
}
