package cq

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHotPathsDoNotAllocate(t *testing.T) {
	ch := NewCompChannel(nil)
	c := mustNew(t, 64, Options{Channel: ch})
	wc := WC{WRID: 1, Opcode: OpcodeSend}
	var sq, rq Freed
	out := make([]WC, 16)
	allocs := testing.AllocsPerRun(1000, func() {
		_ = c.ReqNotify(false)
		_ = c.Push(&wc, true, sq.Token(1))
		_ = c.Push(&wc, false, rq.Token(1))
		_ = c.Push(&wc, false, Token{})
		c.Poll(out)
	})
	require.Zero(t, allocs, "allocations per run of Push/Poll/ReqNotify")
}

// BenchmarkPushPoll pushes 32 completions of two queues, interleaved in runs of 4, and polls them.
func BenchmarkPushPoll(b *testing.B) {
	c, _ := New(256, Options{})
	var queues [2]Freed
	var wc WC
	out := make([]WC, 32)
	b.ReportAllocs()
	for b.Loop() {
		for i := range 32 {
			_ = c.Push(&wc, false, queues[i/4%2].Token(1))
		}
		c.Poll(out)
	}
}
