package cq

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHotPathsDoNotAllocate(t *testing.T) {
	ch := NewCompChannel(nil)
	c := mustNew(t, 64, Options{Channel: ch})
	wc := WC{WRID: 1, Opcode: OpcodeSend}
	batch := make([]WC, 8)
	out := make([]WC, 16)
	allocs := testing.AllocsPerRun(1000, func() {
		_ = c.ReqNotify(false)
		_ = c.Push(&wc, true)
		_, _ = c.PushBatch(batch, false)
		c.Poll(out)
	})
	require.Zero(t, allocs, "allocations per run of Push/PushBatch/Poll/ReqNotify")
}

func BenchmarkPushPoll(b *testing.B) {
	c, _ := New(256, Options{})
	batch := make([]WC, 32)
	out := make([]WC, 32)
	b.ReportAllocs()
	for b.Loop() {
		_, _ = c.PushBatch(batch, false)
		c.Poll(out)
	}
	b.SetBytes(0)
}
