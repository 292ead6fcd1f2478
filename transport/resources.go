package transport

import "github.com/gorxe/gorxe/packet"

// resource is one responder resource (IBTA 9.7.5.1.3): what the responder answered to an RDMA
// READ, atomic, ATOMIC_WRITE or FLUSH request, kept so that a duplicate of the request is answered
// again without executing it a second time.
type resource struct {
	kind     packet.Kind // KindRDMAReadRequest, KindCompareSwap, KindFetchAdd, KindAtomicWrite, KindFlush
	firstPSN packet.PSN
	lastPSN  packet.PSN // firstPSN for everything but a READ, which spans one PSN per response packet

	// READ: the range the original request named; a retried request must stay inside it.
	va     uint64
	rkey   uint32
	length uint32

	// Atomics: the value the target held before the operation, returned again on a duplicate.
	orig uint64
}

// resources is the ring of max_dest_rd_atomic responder resources. A new request takes the oldest
// entry: the requester may not have more than max_dest_rd_atomic reads and atomics outstanding, so
// the entry it overwrites can no longer be retried.
type resources struct {
	ring []resource
	next int // entry the next request takes
	used int // entries holding a request, at most len(ring)
}

// resize gives the ring n entries, forgetting every stored request. It allocates only when n
// grows beyond the ring's capacity, which happens on a Modify, never per packet.
func (r *resources) resize(n int) {
	if cap(r.ring) < n {
		r.ring = make([]resource, n)
	}
	r.ring = r.ring[:n]
	r.clear()
}

// clear forgets every stored request (QP reset or error).
func (r *resources) clear() {
	clear(r.ring)
	r.next, r.used = 0, 0
}

// size returns the number of entries, the QP's max_dest_rd_atomic.
func (r *resources) size() int { return len(r.ring) }

// take returns the entry for a new request, overwriting the oldest one. The ring must not be empty.
func (r *resources) take() *resource {
	res := &r.ring[r.next]
	*res = resource{}
	r.next++
	if r.next == len(r.ring) {
		r.next = 0
	}
	if r.used < len(r.ring) {
		r.used++
	}
	return res
}

// find returns the stored request whose PSN range holds psn, or nil. When PSN ranges overlap
// (after a PSN wrap with stale entries) the newest entry wins.
func (r *resources) find(psn packet.PSN) *resource {
	i := r.next
	for range r.used {
		i--
		if i < 0 {
			i = len(r.ring) - 1
		}
		res := &r.ring[i]
		if psn.InWindow(res.firstPSN, uint32(res.lastPSN.Diff(res.firstPSN))+1) {
			return res
		}
	}
	return nil
}
