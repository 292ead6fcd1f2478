package stack

import (
	"slices"
	"time"

	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/transport"
)

// A poll on the application's goroutine that finds a message runs its engine there, and the
// engine's ACK would be sent before the poll returns the completion: on loopback a send system
// call delivers the datagram to the peer's socket before it returns, a few µs on which the
// application waits. The application usually answers at once (a ping-pong's reply, a repost), so
// such a drain keeps its ACKs back and the next flush sends them after whatever the engines
// produced meanwhile: the reply goes out first and the ACK leaves the critical path. Kernel rxe
// gets the same overlap for free, since its responder posts the completion before it sends the
// ACK and the application polls on another CPU. Measured with send_lat and C ib_send_lat on
// loopback: about 2 µs off a 13-17 µs half round trip.
//
// Only a QP that answers is waited for: one whose engine sent something on a run (a post) since
// its last received packet that made it send. A one-way stream's receiver (send_bw's server)
// never answers, and keeping its ACKs back for its next poll cost the 64-byte message rate 8%.
//
// Kept ACKs go out with the worker's next flush, at the next poll that finds nothing new, before
// the device's QPs change or a MAD is posted (SendKept), or at the latest maxACKHold later, on
// the worker's timer. A process that exits right after its last poll gets none of these, and its
// peer's last message would end in RETRY_EXC_ERR; the C library sends them at exit (SendKept,
// through gorxe's Device.SendHeldACKs).
const maxACKHold = 50 * time.Microsecond

// SendKept sends the ACKs every worker keeps back. It runs before a QP is created, modified or
// destroyed and before a MAD is posted, and for a program that is about to exit: the application
// has left its data path then, and a peer may wait for the acknowledgement before it does what
// the MAD asks. perftest's server listens for its test's QPs once the SEND of its exchange
// completes, and an ACK kept behind the client's connection request made the request arrive
// first, refused. The worker's timer is not
// enough in the C library, whose program thread holds the runtime's processor while it runs C
// code, so that the timer may fire milliseconds late (10 ms in the captures).
func (r *Stack) SendKept() {
	for _, w := range r.workers {
		if w.held.Load() > 0 {
			w.run.Lock()
			w.drain()
			w.run.Unlock()
		}
	}
}

// keepACKs decides what flush does with pkts, the packets the engines produced: it reports
// whether to keep them back, which is done when they are all ACKs of a polled drain that
// completed work (completed), made by QPs that answered. Otherwise it moves the ACKs kept by the
// last flush behind the newer packets, to be sent with them. The caller holds w.run.
func (w *worker) keepACKs(pkts []transport.Packet, completed bool) bool {
	held := int(w.held.Load())
	keep := w.polled && completed && w.replied && !w.unreplied && held == 0 && allACKs(pkts)
	w.replied, w.unreplied = false, false
	if held > 0 {
		rotate(pkts, held)
		w.held.Store(0)
	}
	if !keep {
		return false
	}
	w.held.Store(int32(len(pkts)))
	w.out.Completions = 0
	return true
}

// noteAnswered records, after h's engine handled a received packet with n packets queued before,
// whether the packets it made (if any) come from a QP that answered its last ones.
func (w *worker) noteAnswered(h *QP, n int) {
	if len(w.out.Packets) == n {
		return
	}
	if h.answered {
		w.replied = true
	} else {
		w.unreplied = true
	}
	h.answered = false
}

// allACKs reports whether every packet is an RC ACKNOWLEDGE (an ACK or a NAK), which carries no
// data a peer waits for beyond the acknowledgement itself.
func allACKs(pkts []transport.Packet) bool {
	for i := range pkts {
		if packet.Opcode(pkts[i].Buf[0]) != packet.RCAcknowledge {
			return false
		}
	}
	return true
}

// rotate moves the first k packets of pkts to its end, keeping the order within both parts.
func rotate(pkts []transport.Packet, k int) {
	slices.Reverse(pkts[:k])
	slices.Reverse(pkts[k:])
	slices.Reverse(pkts)
}
