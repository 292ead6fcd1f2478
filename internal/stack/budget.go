package stack

import (
	"time"

	"github.com/gorxe/gorxe/transport"
)

// Device-wide bound on request packets in flight (see transport.SendBudget and
// docs/performance.md, "Many QPs"). Each worker owns an equal share, so the engines that charge
// it run under one run lock and the count needs no atomics.
const (
	// inflightPackets bounds the packets a device's RC QPs may have unacknowledged together. At
	// the few hundred thousand small messages per second one core receives, it keeps the
	// queueing delay in the peer's socket to about 10 ms, well below the Local ACK
	// Timeout, so timers do not expire on packets that are only waiting their turn.
	inflightPackets = 4096
	// inflightBytes bounds the same count by path MTU: about the 7 MiB receive buffer the UDP
	// backend asks for (netio.DefaultSocketBuffer), which the kernel doubles to cover what it
	// charges per datagram beyond the payload.
	inflightBytes = 8 << 20
)

// budgeted is what an engine offers to share its worker's send budget; transport.Engine has it,
// test engines may not.
type budgeted interface {
	SetSendBudget(b *transport.SendBudget)
	ReleaseSendBudget()
	Starved() bool
	Admissible() bool
	Admit()
}

// The stack finds the budget by type assertion (Add), so nothing else would notice if the
// transport's engine stopped offering it: every QP would run without a bound.
var _ budgeted = (*transport.Engine)(nil)

// initBudget gives the worker its share of the device's bound.
func (w *worker) initBudget(workers int) {
	w.budget = transport.SendBudget{Packets: max(inflightPackets/workers, 1), Bytes: max(inflightBytes/workers, 1)}
}

// noteStarved queues h for the budget if its last call left work unsent for lack of room.
func (w *worker) noteStarved(h *QP) {
	if h.bud != nil && !h.starving && h.bud.Starved() {
		h.starving = true
		w.starved = append(w.starved, h)
	}
}

// admissible reports whether admit would run a QP: the oldest waiting one is gone or fits.
func (w *worker) admissible() bool {
	if len(w.starved) == 0 {
		return false
	}
	h := w.starved[0]
	return h.dead || h.bud.Admissible()
}

// admit runs the QPs waiting for the budget, oldest first, while it has room. Each admitted QP
// sends what its window allows at once, so the bound is reached in a few large runs rather than
// one packet per QP.
func (w *worker) admit(now time.Time) {
	n, waiting := 0, len(w.starved)
	for n < waiting {
		h := w.starved[n]
		if !h.dead && !h.bud.Admissible() {
			break
		}
		w.starved[n] = nil
		n++
		h.starving = false
		if h.dead {
			continue
		}
		h.bud.Admit()
		w.runEngine(h, now)
	}
	if n == 0 {
		return
	}
	// The QPs that went back to the queue while this ran were appended behind the rest.
	rest := copy(w.starved, w.starved[n:])
	clear(w.starved[rest:])
	w.starved = w.starved[:rest]
}
