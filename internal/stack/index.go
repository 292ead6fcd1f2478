package stack

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/packet"
)

// The QPN space (24 bits) is split into a directory of chunks of qpnChunk slots, allocated when a
// QP first takes a number in them: the directory costs 32 KiB per device, a chunk 32 KiB.
const (
	qpnChunkBits = 12
	qpnChunkSize = 1 << qpnChunkBits
	qpnDirSize   = (packet.QPNMask + 1) / qpnChunkSize
)

type qpnChunk [qpnChunkSize]atomic.Pointer[QP]

// index maps QP numbers to the handles of live QPs. The receive path looks a QPN up with two
// atomic loads and no lock, as mr's key table resolves keys, so the readers on many cores share
// no written cache line; create and destroy take the mutex, which also orders them with the
// enumerations (sum, list).
type index struct {
	dir [qpnDirSize]atomic.Pointer[qpnChunk]

	mu  sync.Mutex
	qps map[uint32]*QP // the live QPs, for enumeration; guarded by mu
}

func (x *index) init() { x.qps = make(map[uint32]*QP) }

// lookup returns the handle of QP qpn, or nil; lock-free.
func (x *index) lookup(qpn uint32) *QP {
	if qpn > packet.QPNMask {
		return nil
	}
	c := x.dir[qpn>>qpnChunkBits].Load()
	if c == nil {
		return nil
	}
	return c[qpn&(qpnChunkSize-1)].Load()
}

// slot returns the slot of qpn, allocating its chunk; x.mu held.
func (x *index) slot(qpn uint32) *atomic.Pointer[QP] {
	d := &x.dir[qpn>>qpnChunkBits]
	c := d.Load()
	if c == nil {
		c = new(qpnChunk)
		d.Store(c)
	}
	return &c[qpn&(qpnChunkSize-1)]
}

func (x *index) insert(h *QP) {
	x.mu.Lock()
	x.qps[h.qpn] = h
	x.slot(h.qpn).Store(h)
	x.mu.Unlock()
}

// retire drops h and folds its counters into retired, in one step under the lock, so that a
// concurrent sum counts them exactly once.
func (x *index) retire(h *QP, retired *counter.Set) {
	x.mu.Lock()
	if x.qps[h.qpn] == h {
		delete(x.qps, h.qpn)
		x.slot(h.qpn).Store(nil)
	}
	h.eng.Counters().Fold(retired)
	x.mu.Unlock()
}

// sum adds the counters of every live QP and of the retired ones to s.
func (x *index) sum(s *counter.Snapshot, retired *counter.Set) {
	x.mu.Lock()
	defer x.mu.Unlock()
	retired.AddTo(s)
	for _, h := range x.qps {
		h.eng.Counters().AddTo(s)
	}
}

// list returns the handles of the live QPs in QPN order.
func (x *index) list() []*QP {
	x.mu.Lock()
	out := make([]*QP, 0, len(x.qps))
	for _, h := range x.qps {
		out = append(out, h)
	}
	x.mu.Unlock()
	slices.SortFunc(out, func(a, b *QP) int { return cmp.Compare(a.qpn, b.qpn) })
	return out
}
