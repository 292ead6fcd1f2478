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
}

// recvRing is the storage shared by receive queues and SRQs: slots with their SGE arrays,
// allocated a chunk at a time as posts reach them, and head/cursor/tail positions as in the send
// queue (an SRQ keeps cursor == head because popping hands the WQE over for good).
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
func (r *recvRing) full() bool               { return r.tail-r.head == uint64(r.size()) }
func (r *recvRing) waiting() uint64          { return r.tail - r.cursor }

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

// flushRecv completes ring entries head..tail with WCWRFlushErr into c, oldest first.
func (r *recvRing) flush(c *cq.CQ, qpn uint32) {
	for ; r.head != r.tail; r.head++ {
		wc := cq.WC{WRID: r.slot(r.head).ID, Status: cq.WCWRFlushErr, Opcode: cq.OpcodeRecv, QPNum: qpn}
		_ = c.Push(&wc, false)
	}
	r.cursor = r.head
}
