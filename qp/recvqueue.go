package qp

import (
	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
)

// RecvWQE is a receive work request handed to the engine. PopRecv copies it out of the ring, so
// the engine owns its copy until CompleteRecv; reuse one RecvWQE per QP and its SGL stops
// allocating after the first use.
type RecvWQE struct {
	ID     uint64
	SGL    []mr.SGE
	Length uint64 // total SGE length: the largest message it can take

	index   uint64
	fromSRQ bool
	epoch   uint64 // the QP's rqEpoch when an SRQ WQE was popped
}

// recvRing is the storage shared by receive queues and SRQs: slots with their SGE arrays,
// allocated a chunk at a time as posts reach them, and head/cursor/tail positions as in the send
// queue (an SRQ keeps cursor == head because popping hands the WQE over for good). The count of
// slots freed by polled completions (cq.Freed) is kept by the owner, outside the ring, because
// tokens in CQs point at it and a resized SRQ replaces its ring.
type recvRing struct {
	slots  slots[RecvWQE]
	head   uint64
	cursor uint64
	tail   uint64
}

func newRecvRing(wr, sge int) recvRing {
	return recvRing{slots: newSlots(wr, func(c *[chunkSlots]RecvWQE) {
		sges := make([]mr.SGE, chunkSlots*sge)
		for i := range c {
			c[i].SGL = sges[i*sge : i*sge : (i+1)*sge]
		}
	})}
}

func (r *recvRing) slot(pos uint64) *RecvWQE { return r.slots.at(pos) }
func (r *recvRing) size() int                { return r.slots.len() }
func (r *recvRing) waiting() uint64          { return r.tail - r.cursor }

// full reports whether every slot holds a WQE that is posted, held by the transport, or whose
// completion has not been polled yet (freed is the owner's count, see cq.Freed).
func (r *recvRing) full(freed *cq.Freed) bool { return r.tail-freed.Load() >= uint64(r.size()) }

// push copies wr into the next slot; the caller checked capacity and SGE count.
func (r *recvRing) push(wr *RecvWR) {
	w := r.slot(r.tail)
	w.ID = wr.ID
	w.SGL = append(w.SGL[:0], wr.SGList...)
	w.Length = mr.SGEsLength(wr.SGList)
	w.index = r.tail
	r.tail++
}

// pop copies the WQE at the cursor into dst and advances the cursor.
func (r *recvRing) pop(dst *RecvWQE) bool {
	if r.cursor == r.tail {
		return false
	}
	w := r.slot(r.cursor)
	dst.ID, dst.Length, dst.index = w.ID, w.Length, w.index
	dst.SGL = append(dst.SGL[:0], w.SGL...)
	r.cursor++
	return true
}

// resize moves the waiting WQEs (cursor..tail) into a ring of wr slots; positions are preserved.
func (r *recvRing) resize(wr, sge int) {
	n := newRecvRing(wr, sge)
	n.head, n.cursor, n.tail = r.cursor, r.cursor, r.cursor
	for pos := r.cursor; pos != r.tail; pos++ {
		w := r.slot(pos)
		d := n.slot(pos)
		d.ID, d.Length, d.index = w.ID, w.Length, w.index
		d.SGL = append(d.SGL[:0], w.SGL...)
		n.tail++
	}
	*r = n
}

// flush completes ring entries head..tail with WCWRFlushErr into c, oldest first; each frees its
// slot of freed when it is polled.
func (r *recvRing) flush(c *cq.CQ, qpn uint32, freed *cq.Freed) {
	for ; r.head != r.tail; r.head++ {
		wc := cq.WC{WRID: r.slot(r.head).ID, Status: cq.WCWRFlushErr, Opcode: cq.OpcodeRecv, QPNum: qpn}
		_ = pushRecv(c, &wc, false, freed)
	}
	r.cursor = r.head
}
