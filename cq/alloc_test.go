package cq

import "testing"

func TestHotPathsDoNotAllocate(t *testing.T) {
	ch := NewCompChannel()
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
	if allocs != 0 {
		t.Fatalf("Push/PushBatch/Poll/ReqNotify allocate %.1f times per run", allocs)
	}
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
