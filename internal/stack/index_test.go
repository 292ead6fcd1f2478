package stack

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/packet"
)

// TestIndex: QPs in different chunks of the QPN space are found, numbers beyond 24 bits and in
// chunks never used are not, a retired QP is gone, its counters are folded once, and list
// enumerates in QPN order.
func TestIndex(t *testing.T) {
	var x index
	x.init()
	qpns := []uint32{1, 16, qpnChunkSize - 1, qpnChunkSize, packet.QPNMask}
	hs := make([]*QP, len(qpns))
	for i, qpn := range qpns {
		hs[i] = &QP{qpn: qpn, eng: &fakeEngine{}}
		x.insert(hs[i])
	}
	for i, qpn := range qpns {
		assert.Same(t, hs[i], x.lookup(qpn), "QPN %#x", qpn)
	}
	for _, qpn := range []uint32{0, 17, 3 * qpnChunkSize, packet.QPNMask + 1, 1<<32 - 1} {
		assert.Nil(t, x.lookup(qpn), "QPN %#x", qpn)
	}
	require.Equal(t, hs, x.list())

	var retired counter.Set
	hs[1].eng.Counters().Add(counter.RcvdPkts, 3)
	x.retire(hs[1], &retired)
	x.retire(&QP{qpn: qpns[0], eng: &fakeEngine{}}, &retired) // not the live QP 1: it stays
	assert.Nil(t, x.lookup(16))
	assert.Same(t, hs[0], x.lookup(1))
	var s counter.Snapshot
	x.sum(&s, &retired)
	assert.Equal(t, uint64(3), s.Get(counter.RcvdPkts))
}

// TestIndexConcurrent: lookups run while QPs come and go (for the race detector).
func TestIndexConcurrent(t *testing.T) {
	var x index
	x.init()
	stable := &QP{qpn: 20, eng: &fakeEngine{}}
	x.insert(stable)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		var retired counter.Set
		for i := range uint32(1000) {
			h := &QP{qpn: 100 + i%5000, eng: &fakeEngine{}}
			x.insert(h)
			x.retire(h, &retired)
		}
		close(stop)
	})
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if x.lookup(20) != stable {
					t.Error("lost the stable QP")
					return
				}
				x.lookup(150)
			}
		})
	}
	wg.Wait()
}

// BenchmarkIndexLookup looks a live QPN up from every P at once.
func BenchmarkIndexLookup(b *testing.B) {
	var x index
	x.init()
	x.insert(&QP{qpn: 20, eng: &fakeEngine{}})
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if x.lookup(20) == nil {
				b.Fatal("not found")
			}
		}
	})
}
