package stack

import (
	"cmp"
	"slices"
	"sync"

	"github.com/gorxe/gorxe/counter"
)

// index maps QP numbers to the handles of live QPs for the receive path, in the manner of
// wireguard-go's IndexTable: a read lock per lookup, writes only on create and destroy.
type index struct {
	mu  sync.RWMutex
	qps map[uint32]*QP
}

func (x *index) init() { x.qps = make(map[uint32]*QP) }

// lookup returns the handle of QP qpn, or nil.
func (x *index) lookup(qpn uint32) *QP {
	x.mu.RLock()
	h := x.qps[qpn]
	x.mu.RUnlock()
	return h
}

func (x *index) insert(h *QP) {
	x.mu.Lock()
	x.qps[h.qpn] = h
	x.mu.Unlock()
}

// retire drops h and folds its counters into retired, in one step under the lock, so that a
// concurrent sum counts them exactly once.
func (x *index) retire(h *QP, retired *counter.Set) {
	x.mu.Lock()
	if x.qps[h.qpn] == h {
		delete(x.qps, h.qpn)
	}
	h.eng.Counters().Fold(retired)
	x.mu.Unlock()
}

// sum adds the counters of every live QP and of the retired ones to s.
func (x *index) sum(s *counter.Snapshot, retired *counter.Set) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	retired.AddTo(s)
	for _, h := range x.qps {
		h.eng.Counters().AddTo(s)
	}
}

// list returns the handles of the live QPs in QPN order.
func (x *index) list() []*QP {
	x.mu.RLock()
	out := make([]*QP, 0, len(x.qps))
	for _, h := range x.qps {
		out = append(out, h)
	}
	x.mu.RUnlock()
	slices.SortFunc(out, func(a, b *QP) int { return cmp.Compare(a.qpn, b.qpn) })
	return out
}
