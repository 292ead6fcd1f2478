package gorxe

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maxIdleQPBytes is what a connected RC QP that has never been posted to may keep on the heap:
// its send and receive rings are allocated as posts reach them, so an idle QP holds its verbs
// object, its engine and its index entries only.
const maxIdleQPBytes = 4 << 10

// An idle RC QP with perftest's queue depths costs at most maxIdleQPBytes of live heap, however
// deep its queues. Heap bytes, not time: the figure does not depend on the machine's load.
func TestIdleQPMemory(t *testing.T) {
	a, b := fabricPair(t)
	const pairs = 256
	attr := QPInitAttr{SendCQ: a.cq, RecvCQ: a.cq, QPType: QPTypeRC,
		Cap: QPCap{MaxSendWR: 128, MaxRecvWR: 512, MaxSendSGE: 1, MaxRecvSGE: 1}}
	qps := make([]*QP, 0, 2*pairs)
	before := liveHeap()
	for range pairs {
		attr.SendCQ, attr.RecvCQ = a.cq, a.cq
		qa, err := a.d.CreateQP(a.pd, &attr)
		require.NoError(t, err)
		attr.SendCQ, attr.RecvCQ = b.cq, b.cq
		qb, err := b.d.CreateQP(b.pd, &attr)
		require.NoError(t, err)
		connectRC(t, qa, b.gid, qb.QPN(), 0x100, 0x200, MTU4096)
		connectRC(t, qb, a.gid, qa.QPN(), 0x200, 0x100, MTU4096)
		qps = append(qps, qa, qb)
	}
	perQP := (int64(liveHeap()) - int64(before)) / int64(len(qps))
	assert.LessOrEqual(t, perQP, int64(maxIdleQPBytes), "live heap per idle RC QP")
	runtime.KeepAlive(qps)
}

// liveHeap returns the bytes of live heap objects after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
