package transport

import "github.com/gorxe/gorxe/qp"

// SendBudget bounds the request packets that the RC QPs sharing it may have unacknowledged
// together.
//
// Each RC QP may run unackedPSNs ahead of its oldest unacknowledged PSN, which for a thousand QPs
// adds up to far more than a peer's receive socket holds: the excess is dropped, and what is not
// dropped waits so long in the peer's queue that retransmit timers expire although nothing was
// lost. A budget shared by the QPs of one caller (the stack gives one to each worker, whose
// engines never run concurrently, so it needs no lock) keeps the total near Packets, or Bytes
// divided by the path MTU, whichever is less.
//
// The bound is checked when a requester starts to send, not per packet: a QP admitted while the
// budget has room sends what its own window allows in one go, so a flush still carries runs of
// one QP's packets that leave in one system call, and the total overshoots by at most one
// window. A QP that finds the budget full sends nothing new (retransmissions still go) and
// reports itself Starved; the caller queues it and calls Admit and Run on it, first come first
// served, once acknowledgements have made room. While QPs wait, a QP that was not admitted does
// not take the room they wait for, so a few busy QPs cannot starve the rest.
type SendBudget struct {
	Packets int // most packets in flight; zero or less means no bound
	Bytes   int // most bytes in flight, counted as packets × path MTU; zero or less means no bound

	used    int // packets the QPs have unacknowledged
	waiting int // QPs that reported Starved and have not been admitted since
}

// Used returns the packets the QPs sharing the budget have unacknowledged.
func (b *SendBudget) Used() int { return b.used }

// Room reports whether a QP with the given path MTU may start sending.
func (b *SendBudget) Room(mtu int) bool { return b.used < b.limit(mtu) }

// limit returns the bound in packets for a QP with path MTU mtu.
func (b *SendBudget) limit(mtu int) int {
	l := b.Packets
	if l <= 0 {
		l = int(^uint(0) >> 1)
	}
	if b.Bytes > 0 && mtu > 0 {
		l = min(l, max(b.Bytes/mtu, 1))
	}
	return l
}

// SetSendBudget makes the QP's requester share b (nil: no bound). The engine's current charge
// moves from its old budget to b.
func (e *Engine) SetSendBudget(b *SendBudget) {
	e.req.release()
	e.req.budget = b
	e.req.charge()
}

// ReleaseSendBudget returns what the QP has charged to its budget and detaches it; the caller
// does this when it destroys the QP.
func (e *Engine) ReleaseSendBudget() {
	e.req.release()
	e.req.budget = nil
}

// Starved reports whether the last call left work unsent because the budget was full. The
// caller should queue the QP and Admit it once the budget has room.
func (e *Engine) Starved() bool { return e.req.starved }

// Admissible reports whether the budget has room for this QP's path MTU now, so that Admit and
// Run would let it send.
func (e *Engine) Admissible() bool {
	return e.req.budget == nil || e.req.budget.Room(e.req.a.mtu)
}

// Admit lets the next call send even though other QPs wait for the budget: this QP's turn has
// come. The caller then calls Run.
func (e *Engine) Admit() {
	if e.req.starved && e.req.budget != nil {
		e.req.budget.waiting--
	}
	e.req.starved = false
	e.req.admitted = true
}

// gated reports whether the budget holds new packets back now. Retransmissions (the requester
// behind its tip after go-back-N) are charged already and never held.
func (r *requester) gated() bool {
	b := r.budget
	if b == nil || r.a.typ != qp.TypeRC || r.psn != r.tip {
		return false
	}
	if !b.Room(r.a.mtu) {
		return true
	}
	return b.waiting > 0 && !r.admitted
}

// starve records that the requester had work but the budget held it back.
func (r *requester) starve() {
	if !r.starved {
		r.starved = true
		r.budget.waiting++
	}
}

// charge brings the budget's count in line with the packets this requester has in flight.
func (r *requester) charge() {
	if r.budget == nil {
		return
	}
	n := 0
	if r.a.typ == qp.TypeRC && r.canSend() {
		n = int(uint32(r.tip.Sub(uint32(r.e.comp.psn))))
	} else if r.starved {
		r.budget.waiting-- // nothing more to send in this state
		r.starved = false
	}
	r.budget.used += n - r.charged
	r.charged = n
}

// release takes the requester's charge and its place in the queue back from its budget.
func (r *requester) release() {
	if r.budget == nil {
		return
	}
	r.budget.used -= r.charged
	r.charged = 0
	if r.starved {
		r.budget.waiting--
		r.starved = false
	}
}
