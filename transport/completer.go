package transport

import (
	"encoding/binary"
	"time"

	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

// completer is the acknowledgement half of an RC requester (IBTA 9.7.5.2): it matches ACKs, NAKs,
// READ responses and atomic acknowledgements with outstanding WQEs in PSN order, places READ and
// atomic results, runs the retransmit timer and the RNR back-off, and completes WQEs strictly in
// posting order. UC and UD WQEs, and local operations, only pass through its retire step.
type completer struct {
	e *Engine

	psn       packet.PSN // oldest unacknowledged PSN
	retryLeft uint8      // retransmissions left before RETRY_EXC_ERR (retry_cnt)
	rnrLeft   uint8      // RNR retries left before RNR_RETRY_EXC_ERR (rnr_retry; 7 is infinite)
	lateLeft  uint8      // late or busy timer expiries still forgiven before progress (see lateExpiry)
	heard     time.Time  // when the peer last sent this QP a response, new or stale (see busyExpiry)
	rtt       rttTimer   // round-trip estimate that stretches the timeout (see rto.go)
	timer     time.Time  // retransmit deadline; zero when nothing is outstanding or timeouts are off

	// retried says a go-back-N retransmission from retriedPSN is under way, so further NAKs or
	// gaps pointing at the same PSN (sent before the retransmission reached the responder, or
	// duplicated on the way) do not start another one.
	retried    bool
	retriedPSN packet.PSN
}

func (c *completer) init(e *Engine) { c.e = e }

// start begins a PSN sequence at psn (entering RTS).
func (c *completer) start(psn packet.PSN) {
	c.psn = psn
	c.resetRetries()
	c.rtt.reset()
}

// timeout returns the retransmit timeout now: the QP's Local ACK Timeout, stretched by the
// measured round trip within what IBTA allows (see rto.go).
func (c *completer) timeout() time.Duration { return c.rtt.rto(c.e.req.a.timeout) }

// reset forgets timers and retry state (QP reset or error).
func (c *completer) reset() {
	c.timer = time.Time{}
	c.retried = false
}

func (c *completer) resetRetries() {
	a := &c.e.req.a
	c.retryLeft, c.rnrLeft, c.lateLeft = a.retryCnt, a.rnrRetry, maxLateExpiries
}

// deadline returns when the retransmit timer fires, or zero.
func (c *completer) deadline() time.Time { return c.timer }

// sent arms the retransmit timer when request packets went out and none is running.
func (c *completer) sent(now time.Time) {
	r := &c.e.req
	if r.a.timeout != 0 && r.psn == r.tip {
		// New packets, not a retransmission: time the last one sent.
		c.rtt.start(r.tip.Sub(1), now)
	}
	if c.timer.IsZero() && r.a.timeout != 0 && c.psn != r.tip {
		c.timer = now.Add(c.timeout())
	}
}

// tick fires the retransmit timer: the oldest unacknowledged packet and everything after it are
// sent again, or the oldest WQE fails once retry_cnt retransmissions have gone unanswered. An
// expiry noticed late is not counted (see lateExpiry).
func (c *completer) tick(now time.Time, out *Output) {
	r := &c.e.req
	r.sync(out)
	if c.timer.IsZero() || now.Before(c.timer) {
		return
	}
	deadline := c.timer
	c.timer = time.Time{}
	if r.a.typ != qp.TypeRC || !r.canSend() || c.psn == r.tip {
		return
	}
	if c.lateExpiry(now, deadline) {
		c.e.ctr.Inc(counter.LateTimeouts)
		c.timer = now.Add(c.timeout())
		return
	}
	if c.busyExpiry(now, c.timeout()) {
		c.e.ctr.Inc(counter.BusyTimeouts)
		c.timer = now.Add(c.timeout())
		return
	}
	c.retry(now, true)
}

// retry starts a go-back-N retransmission from the oldest unacknowledged PSN after a timeout, a
// PSN sequence error NAK, an implicit NAK or a gap in READ responses. Each counts against
// retry_cnt, which is reset whenever the responder acknowledges something new. IBTA gives 7 no
// special meaning here (only rnr_retry 7 means "forever"); rxe retries forever at 7, gorxe follows
// the spec.
func (c *completer) retry(now time.Time, timeout bool) {
	if !timeout && c.retried && c.retriedPSN == c.psn {
		return
	}
	ctr := &c.e.ctr
	if c.retryLeft == 0 {
		ctr.Inc(counter.RetryExceededErr)
		c.failHead(now, cq.WCRetryExcErr)
		return
	}
	c.retryLeft--
	if timeout {
		c.e.note(Event{Kind: EventRetryTimeout, PSN: c.psn, RetriesLeft: c.retryLeft})
	}
	c.retried, c.retriedPSN = true, c.psn
	ctr.Inc(counter.CompleterRetryErr)
	r := &c.e.req
	if timeout {
		c.rtt.timedOut()
		// Silence may mean loss or a responder still working through a backlog (a software stack
		// on a slow machine): resend one packet, not the whole window, and grow back as
		// acknowledgements return. A NAK, by contrast, comes from a responder that is keeping up.
		r.shrinkWindow()
	}
	r.rewind(c.psn)
	c.rtt.cancel()
	c.timer = time.Time{}
	if r.a.timeout != 0 {
		c.timer = now.Add(c.timeout())
	}
}

// advance moves the oldest unacknowledged PSN forward to psn after the responder confirmed
// everything before it.
func (c *completer) advance(now time.Time, psn packet.PSN) {
	if !c.psn.LessThan(psn) {
		return
	}
	c.psn = psn
	c.resetRetries()
	c.retried = false
	c.rtt.acked(psn, now)
	c.rtt.progress()
	r := &c.e.req
	r.growWindow()
	if r.psn.LessThan(psn) {
		// A retransmission is resending packets the responder has now confirmed: skip them.
		r.rewind(psn)
	}
	c.timer = time.Time{}
	if c.psn != r.tip && r.a.timeout != 0 {
		c.timer = now.Add(c.timeout())
	}
}

// receive handles an acknowledgement, READ response or atomic acknowledgement.
func (c *completer) receive(now time.Time, p *packet.Parsed, from *packet.Envelope, out *Output) {
	r := &c.e.req
	r.sync(out)
	ctr := &c.e.ctr
	switch {
	case r.a.typ != qp.TypeRC || p.Opcode().Transport() != packet.TransportRC:
		ctr.Inc(counter.RcvdBadOpcode)
		return
	case !r.canSend():
		ctr.Inc(counter.RcvdWrongState)
		return
	case !sameHost(from.Src.Addr(), c.e.at.path.Dst.Addr()):
		ctr.Inc(counter.RcvdWrongPath)
		return
	}
	c.heard = now
	psn := p.BTH().PSN()
	if !psn.InWindow(c.psn, uint32(r.tip.Diff(c.psn))) {
		// Stale (already acknowledged: a duplicate or a late copy) or never sent.
		ctr.Inc(counter.RcvdUnexpected)
		return
	}
	c.process(now, p, psn)
	c.retire(now)
}

// process applies a response whose PSN is in flight. Acknowledgements are cumulative: every WQE
// that ends before psn is complete, unless it is waiting for data (READ) or a result (atomics),
// in which case the responder has moved past a response that was lost: an implicit NAK.
func (c *completer) process(now time.Time, p *packet.Parsed, psn packet.PSN) {
	var w *qp.SendWQE
	for {
		w = c.retire(now)
		if w == nil || (w.Progress.State != wqeSending && w.Progress.State != wqeSent) {
			c.e.ctr.Inc(counter.RcvdUnexpected)
			return
		}
		last := packet.PSN(w.Progress.LastPSN)
		if !last.LessThan(psn) {
			break
		}
		if needsResponse(w.WR.Opcode) {
			c.retry(now, false)
			return
		}
		c.advance(now, last.Add(1))
		if !c.complete(w, cq.WCSuccess) {
			return
		}
	}
	switch p.Opcode().Kind() {
	case packet.KindAcknowledge:
		c.acknowledge(now, w, p, psn)
	case packet.KindAtomicAcknowledge:
		c.atomicAcknowledge(now, w, p, psn)
	case packet.KindRDMAReadResponse:
		c.readResponse(now, w, p, psn)
	default:
		c.e.ctr.Inc(counter.RcvdBadOpcode)
	}
}

// acknowledge handles an ACKNOWLEDGE packet for a PSN of w, the oldest outstanding WQE.
func (c *completer) acknowledge(now time.Time, w *qp.SendWQE, p *packet.Parsed, psn packet.PSN) {
	ctr := &c.e.ctr
	syn := p.AETH().Syndrome()
	switch syn.Type() {
	case packet.SyndromeTypeACK:
		if needsResponse(w.WR.Opcode) {
			return // only its response retires a READ or atomic
		}
		c.advance(now, psn.Add(1))
		if psn == packet.PSN(w.Progress.LastPSN) {
			c.complete(w, cq.WCSuccess)
		}
	case packet.SyndromeTypeRNRNAK:
		r := &c.e.req
		if psn == c.psn && now.Before(r.hold) {
			return // a copy of the NAK that started the current back-off
		}
		ctr.Inc(counter.RcvdRNRErr)
		c.e.note(Event{Kind: EventNAKReceived, PSN: psn, Syndrome: syn})
		c.advance(now, psn)
		c.rnr(now, w, syn.Value())
	case packet.SyndromeTypeNAK:
		c.e.note(Event{Kind: EventNAKReceived, PSN: psn, Syndrome: syn})
		c.advance(now, psn)
		if syn == packet.SyndromeNAKPSNSequenceError {
			ctr.Inc(counter.RcvdSeqErr)
			c.retry(now, false)
			return
		}
		c.fail(now, w, nakStatus(syn))
	default:
		c.fail(now, w, cq.WCBadRespErr)
	}
}

// rnr backs off after an RNR NAK for the packet at c.psn: the requester resends from it once the
// delay the NAK's timer code names has passed, unless rnr_retry is used up (7 never is).
func (c *completer) rnr(now time.Time, w *qp.SendWQE, code uint8) {
	if c.rnrLeft == 0 {
		c.e.ctr.Inc(counter.RetryRNRExceededErr)
		c.fail(now, w, cq.WCRNRRetryExcErr)
		return
	}
	if c.rnrLeft != 7 {
		c.rnrLeft--
	}
	r := &c.e.req
	r.rewind(c.psn)
	c.rtt.cancel()
	r.hold = now.Add(packet.RNRTimer(code))
	c.timer = time.Time{}
	c.retried, c.retriedPSN = true, c.psn
}

// atomicAcknowledge stores the original remote value of a compare-and-swap or fetch-and-add in
// its 8-byte local buffer, in host byte order, and completes it.
func (c *completer) atomicAcknowledge(now time.Time, w *qp.SendWQE, p *packet.Parsed, psn packet.PSN) {
	if !w.WR.Opcode.IsAtomic() {
		c.fail(now, w, cq.WCBadRespErr)
		return
	}
	var orig [8]byte
	binary.NativeEndian.PutUint64(orig[:], p.AtomicAckETH().OriginalRemoteData())
	cur := &w.Progress.Cursor
	cur.Reset(w.WR.SGList)
	if err := c.e.dev.Mem.Scatter(cur, c.e.q.PD(), orig[:]); err != nil {
		c.fail(now, w, localStatus(err))
		return
	}
	c.advance(now, psn.Add(1))
	c.complete(w, cq.WCSuccess)
}

// readResponse places one RDMA READ response packet into the local SGEs of w. Responses must
// arrive in PSN order; a gap means one was lost and the rest of the READ is requested again.
// ATOMIC_WRITE and FLUSH are answered with an empty READ_RESPONSE_ONLY (IBTA 1.5).
func (c *completer) readResponse(now time.Time, w *qp.SendWQE, p *packet.Parsed, psn packet.PSN) {
	op := p.Opcode()
	payload := p.Payload()
	last := packet.PSN(w.Progress.LastPSN)
	switch w.WR.Opcode {
	case qp.WRAtomicWrite, qp.WRFlush:
		if op != packet.RCRDMAReadResponseOnly || len(payload) != 0 {
			c.fail(now, w, cq.WCBadRespErr)
			return
		}
		c.advance(now, psn.Add(1))
		c.complete(w, cq.WCSuccess)
		return
	case qp.WRRDMARead:
	default:
		c.fail(now, w, cq.WCBadRespErr)
		return
	}
	if psn != c.psn {
		c.retry(now, false)
		return
	}
	mtu := uint64(c.e.req.a.mtu)
	off := uint64(psn.Diff(packet.PSN(w.Progress.FirstPSN))) * mtu
	isLast := psn == last
	var ok bool
	switch op.Position() {
	case packet.PositionFirst, packet.PositionMiddle:
		ok = !isLast && uint64(len(payload)) == mtu
	default:
		ok = isLast && off <= w.Length && uint64(len(payload)) == w.Length-off
	}
	if !ok {
		c.fail(now, w, cq.WCLocLenErr)
		return
	}
	cur := &w.Progress.Cursor
	if cur.Pos() != off {
		if err := cur.Seek(off); err != nil {
			c.fail(now, w, cq.WCLocLenErr)
			return
		}
	}
	if err := c.e.dev.Mem.Scatter(cur, c.e.q.PD(), payload); err != nil {
		c.fail(now, w, localStatus(err))
		return
	}
	c.e.ctr.Add(counter.RcvdBytes, uint64(len(payload)))
	c.advance(now, psn.Add(1))
	if isLast {
		c.complete(w, cq.WCSuccess)
	}
}

// nakStatus maps a NAK syndrome to the completion status of the request it rejects
// (IBTA 9.7.5.2.4; rxe maps the same way).
func nakStatus(s packet.Syndrome) cq.Status {
	switch s {
	case packet.SyndromeNAKInvalidRequest:
		return cq.WCRemInvReqErr
	case packet.SyndromeNAKRemoteAccessError:
		return cq.WCRemAccessErr
	case packet.SyndromeNAKRemoteOperationalError:
		return cq.WCRemOpErr
	case packet.SyndromeNAKInvalidRDRequest:
		return cq.WCRemInvRDReqErr
	}
	return cq.WCRemOpErr
}

// fail finishes w, the oldest WQE, in error and completes it (which moves the QP out of RTS).
func (c *completer) fail(now time.Time, w *qp.SendWQE, st cq.Status) {
	w.Progress.State = wqeFailed | uint8(st)
	c.retire(now)
}

// failHead fails the oldest outstanding WQE.
func (c *completer) failHead(now time.Time, st cq.Status) {
	if w := c.retire(now); w != nil {
		c.fail(now, w, st)
	}
}

// retire completes the WQEs at the head of the send queue that have finished: local operations,
// UC and UD sends, and failures the requester found. It stops at the first one still in flight,
// or after a failure or a completion that could not be delivered, and returns the head WQE it
// leaves (nil if none), which spares the caller another look at the queue.
func (c *completer) retire(now time.Time) *qp.SendWQE {
	sq := c.e.q.SendQueue()
	for {
		w, ok := sq.Head()
		if !ok {
			return nil
		}
		st := w.Progress.State
		switch {
		case st == wqeDone:
			if c.complete(w, cq.WCSuccess) {
				continue
			}
		case st&wqeFailed != 0:
			c.complete(w, cq.Status(st&^wqeFailed))
		default:
			return w
		}
		w, _ = sq.Head()
		return w
	}
}

// complete retires w, the head WQE, with status st. An error status, or a completion that
// overflows the CQ (IBTA class G), takes the QP out of RTS: to ERR for RC, to SQE for UC and UD,
// which flushes the WQEs behind it. It reports whether the QP can go on.
func (c *completer) complete(w *qp.SendWQE, st cq.Status) bool {
	r := &c.e.req
	if needsResponse(w.WR.Opcode) && w.Progress.State != wqeNew && r.rdAtomic > 0 {
		r.rdAtomic--
	}
	switch w.WR.Opcode {
	case qp.WRSend, qp.WRSendWithImm, qp.WRSendWithInv:
		// rxe's rdma_sends counts SEND work requests retired, whatever their status.
		c.e.ctr.Inc(counter.RDMASends)
	}
	var op cq.Opcode
	var wrID uint64
	if st != cq.WCSuccess {
		// Read before Complete frees the slot for the next post.
		op, wrID = w.WR.Opcode.CompletionOpcode(), w.WR.ID
	}
	c.e.completed()
	sq := c.e.q.SendQueue()
	if st == cq.WCSuccess {
		switch err := sq.Complete(w.Index, st, 0); err {
		case nil:
			return true
		case qp.ErrStale:
			return false // flushed or reset meanwhile
		}
		// The completion did not fit: the CQ overflowed (class G) and the QP goes to ERR.
		from, moved := c.e.q.EnterError()
		c.e.enteredError(from, moved, st, true)
		c.e.resetSend()
		return false
	}
	from, moved, err := sq.Fail(w.Index, st)
	if err == qp.ErrStale {
		return false
	}
	c.e.completedInError(st, op, wrID, false)
	c.e.enteredError(from, moved, st, err != nil)
	c.e.resetSend()
	return false
}
