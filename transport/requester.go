package transport

import (
	"net/netip"
	"time"

	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

// The requester turns send WQEs into request packets; the completer retires them on
// acknowledgements. They share the send queue and talk through a deliberately small interface:
//
//   - requester → completer: comp.sent(now) after request packets left (arms the retransmit
//     timer), comp.retire(now) after WQEs finished locally (local operations, UC/UD sends, local
//     errors) so they complete in posting order, and req.tip, the PSN after the highest one sent,
//     which bounds the PSNs an acknowledgement may carry.
//   - completer → requester: comp.psn, the oldest unacknowledged PSN, which closes the send window
//     (req.psn may run at most unackedPSNs ahead of it); req.rewind(psn) for go-back-N
//     retransmission from the oldest unacknowledged packet; req.hold, a time before which nothing
//     is sent (RNR back-off); req.rdAtomic, decremented when a READ or atomic completes, which
//     opens the initiator depth and releases fences.
//
// Per-WQE state lives in the slot's qp.Progress: State (the wqe* constants below), FirstPSN and
// LastPSN once assigned, Sent (payload offset of the next packet) and the SGE Cursor, which the
// requester uses to gather and the completer to scatter READ and atomic results.

// WQE states kept in qp.Progress.State.
const (
	wqeNew     uint8 = iota // posted, not yet looked at by the requester
	wqeSending              // PSNs assigned; packets from Progress.Sent on still to send
	wqeSent                 // every packet sent, waiting for its acknowledgement or response
	wqeDone                 // finished successfully; completes once it is the oldest WQE
	// wqeFailed, OR-ed with a cq.Status, marks a WQE that finished in error; it completes once it
	// is the oldest, and then the QP leaves RTS. The requester never goes past it.
	wqeFailed uint8 = 0x80
)

const (
	// unackedPSNs is how far the requester may run ahead of the oldest unacknowledged PSN on an RC
	// QP (rxe's RXE_MAX_UNACKED_PSNS).
	unackedPSNs = 128
	// pktsPerAck is how many packets of one message go without AckReq before one asks for an
	// acknowledgement (rxe's RXE_MAX_PKT_PER_ACK), so long messages retire progressively.
	pktsPerAck = 64
	// runBudget bounds the packets one call produces so a huge UC or UD backlog cannot grow the
	// output without limit; Deadline reports the rest as due at once.
	runBudget = 256
	// maxOutstandingPSNs is the most PSNs an RC requester may have unacknowledged (IBTA: half the
	// PSN space, beyond which old and new PSNs cannot be told apart).
	maxOutstandingPSNs = 1 << 23
)

// sendAttrs are the QP attributes the send side uses, copied from the qp package once per call so
// the per-packet path takes no locks.
type sendAttrs struct {
	state       qp.State
	typ         qp.Type
	qpn         uint32
	destQPN     uint32
	mtu         int
	qkey        uint32
	sqPSN       uint32
	timeout     time.Duration
	retryCnt    uint8
	rnrRetry    uint8
	maxRdAtomic int
}

// requester is the send half of a QP's transport (IBTA 9.7.4 requester side).
type requester struct {
	e *Engine
	a sendAttrs
	// gen is the snapshot generation a was derived from; the derivation is redone only when
	// Modify changed something, so like rxe's per-QP route cache a changed local address is
	// picked up at the next Modify.
	gen     uint64
	version uint64 // the snapshot's version when last compared (unread at first)
	resets  uint64 // snapshot.resets a was derived at: a change is a new connection

	// limit is the send window in PSNs, at most unackedPSNs. A retransmit timeout shrinks it to
	// one packet and each acknowledgement that makes progress doubles it again (see
	// completer.retry), so a responder that is alive but slower than the ACK timeout is probed
	// rather than buried under windows of duplicates.
	limit        uint32
	psn          packet.PSN // PSN of the next request packet
	tip          packet.PSN // PSN after the highest one ever sent: [comp.psn, tip) is in flight
	next         uint64     // ring position of the WQE being sent
	pktsSinceAck int        // packets of the current burst without AckReq
	rdAtomic     int        // READ/atomic/FLUSH/ATOMIC_WRITE WQEs started and not completed
	hold         time.Time  // RNR back-off: send nothing before this
	more         bool       // the budget ran out with work left
	now          time.Time  // time of the last call, returned by deadline when more is set

	budget   *SendBudget // shared bound on packets in flight, or nil (see SendBudget)
	charged  int         // packets this requester has counted in budget.used
	starved  bool        // work held back by the budget; counted in budget.waiting
	admitted bool        // the caller gave this QP its turn (Admit) for the next call
}

func (r *requester) init(e *Engine) {
	r.e = e
	r.a.state = qp.StateReset
}

// sync refreshes the cached attributes and reacts to state changes made through Modify: entering
// RTS starts the PSN sequence at sq_psn; RESET, ERR and SQE forget everything in flight (the qp
// package has already flushed or discarded the WQEs).
func (r *requester) sync(out *Output) {
	if r.e.q.AttrVersion() != r.version {
		r.derive(out)
	}
}

// derive recomputes a from the attributes if they changed since a was derived.
func (r *requester) derive(out *Output) {
	s := r.e.attrs(out)
	r.version = s.version
	if s.gen == r.gen {
		return
	}
	q := r.e.q
	attr := &s.attr
	// A RESET this engine never saw may bring back identical attributes, so the reset count
	// decides, not the attributes alone.
	reconnected := r.gen != 0 && s.resets != r.resets
	r.gen, r.resets = s.gen, s.resets
	prev := r.a.state
	a := &r.a
	a.state, a.typ, a.qpn = attr.State, q.Type(), q.QPN()
	a.destQPN, a.qkey = attr.DestQPNum, attr.QKey
	a.timeout, a.retryCnt, a.rnrRetry = ackTimeout(attr.Timeout), attr.RetryCnt, attr.RNRRetry
	a.maxRdAtomic = int(attr.MaxRdAtomic)
	a.mtu = attr.PathMTU.Bytes()
	if a.typ == qp.TypeUD || a.typ == qp.TypeGSI || a.mtu == 0 {
		a.mtu = r.e.dev.udMTU()
	}
	// Only RTR->RTS sets sq_psn, so RTS with a new sq_psn, reached from a state that cannot go
	// to RTS directly, or after a RESET, is a new connection.
	resumed := !reconnected && (prev == qp.StateRTS || prev == qp.StateSQD || prev == qp.StateSQE)
	switch {
	case a.state == qp.StateRTS && (!resumed || attr.SQPSN != a.sqPSN):
		r.e.resetSend()
		a.sqPSN = attr.SQPSN
		r.psn = packet.PSN(attr.SQPSN)
		r.tip = r.psn
		r.e.comp.start(r.psn)
	case reconnected:
		r.e.resetSend()
	case a.state == prev:
	case a.state == qp.StateReset || a.state == qp.StateErr || a.state == qp.StateSQE:
		r.e.resetSend()
	}
}

// withSourcePort returns the framing p with UDP source port sport.
func withSourcePort(p packet.Envelope, sport uint16) packet.Envelope {
	p.Src = netip.AddrPortFrom(p.Src.Addr(), sport)
	return p
}

// resetSend forgets all send-side progress: the QP was reset, or left RTS in error and the qp
// package flushed its send queue.
func (e *Engine) resetSend() {
	e.req.reset()
	e.comp.reset()
}

// reset forgets the send progress (the WQEs themselves belong to the qp package).
func (r *requester) reset() {
	r.pktsSinceAck, r.rdAtomic, r.limit = 0, 0, 0
	r.hold, r.more = time.Time{}, false
	head, _, _ := r.e.q.SendQueue().Positions()
	r.next = head
}

// deadline returns when run has work again without outside input.
func (r *requester) deadline() time.Time {
	if r.more {
		return r.now
	}
	return r.hold
}

// canSend reports whether the QP state lets the requester transmit: RTS, and SQD while WQEs
// started before the drain finish (the qp package refuses to start new ones).
func (r *requester) canSend() bool {
	return r.a.state == qp.StateRTS || r.a.state == qp.StateSQD
}

// run sends what the windows allow, executes local operations in order and retires finished
// WQEs.
func (r *requester) run(now time.Time, out *Output) {
	r.now = now
	r.more = false
	r.sync(out)
	defer r.charge()
	if !r.hold.IsZero() && !now.Before(r.hold) {
		r.hold = time.Time{}
		c := &r.e.comp
		r.e.note(Event{Kind: EventRNRTimeout, PSN: c.psn, RetriesLeft: c.rnrLeft})
	}
	if !r.canSend() || !r.hold.IsZero() {
		return
	}
	sq := r.e.q.SendQueue()
	gated := r.gated()
	r.admitted = false
	if gated {
		if _, cursor, tail := sq.Positions(); cursor < tail || r.next < cursor {
			r.starve()
		}
		r.e.comp.retire(now)
		return
	}
	budget := runBudget
	sentAny := false
	for budget > 0 {
		w := r.current(sq)
		if w == nil {
			break
		}
		n, blocked := r.advance(w, out, budget)
		budget -= n
		sentAny = sentAny || n > 0
		if blocked {
			break
		}
	}
	if budget == 0 {
		r.more = true
	}
	if sentAny && r.a.typ == qp.TypeRC {
		r.e.comp.sent(now)
	}
	r.e.comp.retire(now)
}

// current returns the WQE the requester works on, starting the next posted one when everything
// before it has been sent, or nil when there is nothing to do.
func (r *requester) current(sq *qp.SendQueue) *qp.SendWQE {
	for {
		head, cursor, w := sq.Peek(r.next)
		if r.next < head {
			r.next = head
			continue
		}
		if r.next < cursor {
			if w == nil {
				return nil
			}
			switch st := w.Progress.State; {
			case st == wqeSending:
				return w
			case st&wqeFailed != 0:
				return nil // a failed WQE is a barrier until the completer retires it
			case st == wqeNew:
				return w // started by StartNext but not yet begun (should not happen)
			default: // sent or done: nothing left to send for it
				r.next++
				continue
			}
		}
		if r.next != cursor {
			// The walk keeps r.next at or before the cursor, so this is a safeguard: the WQE to
			// start is the cursor's.
			_, _, w = sq.Peek(cursor)
		}
		if w == nil || !r.mayStart(w) {
			return nil
		}
		w, ok := sq.StartNext()
		if !ok {
			return nil
		}
		r.next = w.Index
		return w
	}
}

// mayStart applies the checks that hold a new WQE back: the fence (IBTA 10.8.3.3: wait until
// every earlier READ and atomic has completed) and the initiator depth (max_rd_atomic).
func (r *requester) mayStart(w *qp.SendWQE) bool {
	if !isLocalOp(w.WR.Opcode) && r.windowClosed() {
		return false
	}
	if w.WR.Flags&qp.SendFence != 0 && r.rdAtomic > 0 {
		return false
	}
	if w.WR.Opcode == qp.WRRDMARead && r.a.typ == qp.TypeRC && r.outstanding()+uint32(r.packets(w)) > maxOutstandingPSNs {
		// A READ reserves a PSN per response packet; a 2 GiB READ at MTU 256 takes the most
		// there may ever be outstanding and must wait until everything before it is acknowledged.
		return false
	}
	if needsResponse(w.WR.Opcode) && r.rdAtomic >= max(r.a.maxRdAtomic, 1) {
		// max_rd_atomic 0 would block a posted READ forever; gorxe lets one through and the
		// responder, which has no resources for it either, answers as the spec says.
		return false
	}
	return true
}

// windowClosed reports whether an RC requester is as far ahead of the oldest unacknowledged PSN
// as it may go.
func (r *requester) windowClosed() bool {
	return r.a.typ == qp.TypeRC && r.outstanding() >= r.window()
}

// window returns the send window in PSNs: limit, or the full unackedPSNs before the first timeout.
func (r *requester) window() uint32 {
	if r.limit == 0 {
		return unackedPSNs
	}
	return r.limit
}

// shrinkWindow drops the window to one packet after a retransmit timeout.
func (r *requester) shrinkWindow() { r.limit = 1 }

// growWindow doubles the window after an acknowledgement that made progress, up to unackedPSNs.
func (r *requester) growWindow() {
	if r.limit != 0 {
		if r.limit *= 2; r.limit >= unackedPSNs {
			r.limit = 0
		}
	}
}

// outstanding returns how many PSNs lie between the oldest unacknowledged one and the next to
// send. It is an unsigned distance: a READ can make it exactly 2^23, where a signed serial-number
// difference would turn negative.
func (r *requester) outstanding() uint32 {
	return uint32(r.psn.Sub(uint32(r.e.comp.psn)))
}

// advance makes progress on w: it begins it if new, executes it if it is a local operation, and
// otherwise sends packets until the message is out, the budget is spent or the window closes.
// It returns the packets produced and whether the requester must stop for now.
func (r *requester) advance(w *qp.SendWQE, out *Output, budget int) (int, bool) {
	if w.Progress.State == wqeNew {
		if isLocalOp(w.WR.Opcode) {
			r.executeLocal(w)
			if w.Progress.State != wqeDone {
				return 0, true // failed: a barrier until the completer retires it
			}
			r.next++
			return 0, false
		}
		if st, ok := r.begin(w); !ok {
			r.fail(w, st)
			return 0, true
		}
	}
	n := 0
	for n < budget {
		if r.windowClosed() {
			return n, true
		}
		st, ok := r.sendPacket(w, out)
		if !ok {
			r.fail(w, st)
			return n, true
		}
		n++
		if w.Progress.State != wqeSending {
			r.next++
			return n, false
		}
	}
	return n, true
}

// begin assigns PSNs to a new message and checks what can be checked before the first packet.
func (r *requester) begin(w *qp.SendWQE) (cq.Status, bool) {
	p := &w.Progress
	op := w.WR.Opcode
	switch r.a.typ {
	case qp.TypeUD, qp.TypeGSI:
		if w.Length > uint64(r.a.mtu) {
			return cq.WCLocLenErr, false
		}
	}
	if op == qp.WRSendWithInv && r.a.typ != qp.TypeRC {
		// Only RC has SEND_WITH_INVALIDATE opcodes (IBTA table 38); rxe fails it the same way.
		return cq.WCLocQPOpErr, false
	}
	if needsResponse(op) {
		// Counted from here on; the completer uncounts it when it completes, even in error.
		r.rdAtomic++
	}
	p.Cursor.Reset(w.WR.SGList)
	if isResultOp(op) {
		// READ and atomic results land in local memory: check it may be written before asking.
		if _, err := r.e.dev.Mem.ValidateSGEs(r.e.q.PD(), accessLocalWrite, w.WR.SGList); err != nil {
			return cq.WCLocProtErr, false
		}
	}
	p.FirstPSN = uint32(r.psn)
	p.LastPSN = uint32(r.psn.Add(uint32(r.packets(w) - 1)))
	p.Sent = 0
	p.State = wqeSending
	r.pktsSinceAck = 0
	return 0, true
}

// packets returns how many PSNs a message uses: one per MTU of payload (at least one) for SEND,
// WRITE and READ (whose request reserves a PSN per response packet), one for the others.
func (r *requester) packets(w *qp.SendWQE) int {
	switch w.WR.Opcode {
	case qp.WRSend, qp.WRSendWithImm, qp.WRSendWithInv, qp.WRRDMAWrite, qp.WRRDMAWriteWithImm, qp.WRRDMARead:
		if r.a.typ == qp.TypeUD || r.a.typ == qp.TypeGSI {
			return 1
		}
		return max(1, int((w.Length+uint64(r.a.mtu)-1)/uint64(r.a.mtu)))
	}
	return 1
}

// fail finishes w in error; the completer completes it in order and moves the QP out of RTS.
func (r *requester) fail(w *qp.SendWQE, st cq.Status) {
	r.e.ctr.Inc(counter.SendErr)
	w.Progress.State = wqeFailed | uint8(st)
}

// rewind restarts transmission at psn, the oldest unacknowledged PSN (go-back-N): the WQE holding
// it resends from the packet with that PSN (a READ asks again for the rest of its data), every
// later WQE with PSNs resends from its start. Local operations are not executed again.
func (r *requester) rewind(psn packet.PSN) {
	sq := r.e.q.SendQueue()
	head, cursor, _ := sq.Positions()
	found := false
	for pos := head; pos < cursor; pos++ {
		w, ok := sq.At(pos)
		if !ok {
			break
		}
		p := &w.Progress
		if p.State != wqeSending && p.State != wqeSent {
			continue
		}
		if !found && psn.InWindow(packet.PSN(p.FirstPSN), uint32(packet.PSN(p.LastPSN).Diff(packet.PSN(p.FirstPSN)))+1) {
			found = true
			r.next = pos
			p.Sent = min(w.Length, uint64(psn.Diff(packet.PSN(p.FirstPSN)))*uint64(r.a.mtu))
			p.State = wqeSending
			continue
		}
		if found {
			p.Sent = 0
			p.State = wqeSending
		}
	}
	// PSN ranges are contiguous, so a PSN no WQE holds is the tip: everything sent is confirmed.
	r.psn = psn
	r.pktsSinceAck = 0
}
