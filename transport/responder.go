package transport

import (
	"errors"
	"time"

	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

// responder executes the requests that arrive at a QP (the responder side of IBTA 9.7 for RC and
// 9.8 for UC and UD): it checks each packet against the QP's expected PSN and message state,
// places data into receive WQEs and registered memory through mr, produces receive completions,
// and answers RC requests with ACKs, NAKs, RDMA READ responses and atomic acknowledgements.
type responder struct {
	e *Engine

	gen     uint64 // the snapshot generation the state below was brought in line with
	version uint64 // the snapshot's version when last compared (unread at first)
	mtu     int    // path MTU in bytes (connected QPs)

	// started says psn, msn and the resources were initialised for the current RTR; rqPSN is the
	// rq_psn they were initialised from, so a new connection is noticed even when the state
	// changes between two calls.
	started bool
	commEst bool // the first packet in RTR was reported (IBV_EVENT_COMM_EST)
	rqPSN   uint32
	resets  uint64 // qp.ResetCount they were initialised at: a RESET since is a new connection

	psn     packet.PSN // expected PSN of the next request
	msn     uint32     // message sequence number: messages completed, 24 bits
	nakSent bool       // a PSN sequence error NAK is outstanding; repeat it only after recovery

	// Message in progress on a connected QP: KindSend or KindRDMAWrite between a FIRST and its
	// LAST, KindInvalid otherwise.
	msgKind packet.Kind
	ucDrop  bool // UC: the current message is lost; drop until the next FIRST or ONLY

	// The receive WQE taken for a SEND or RDMA WRITE with immediate. A WQE whose message was
	// abandoned (UC packet loss, UD drops) stays here for the next message.
	wqe     qp.RecvWQE
	haveWQE bool
	cur     mr.Cursor // where the next SEND payload goes in wqe

	// RDMA WRITE in progress.
	writeVA    uint64
	writeRKey  uint32
	writeResid uint32 // bytes still to come
	writeLen   uint32 // RETH DMA length: the byte_len of a WRITE with immediate

	res  resources
	read readReply
	pace readPacer

	// A positive ACK put off until the end of a burst of packets (see QP.ReceiveMore), with the
	// MSN it was due with.
	ackDue bool
	ackPSN packet.PSN
	ackMSN uint32
}

// readBurst bounds the RDMA READ response packets built in one call while responses are not
// paced (see readPacer); a longer response continues in Run, which the deadline asks for at once.
// It keeps the output of one call (and the buffers it holds) bounded for a 2 GiB read, and lets
// the packets that arrive meanwhile in: a repeated request replaces the rest of the answer (the
// requester would discard it) after at most a burst, 1 MiB at MTU 4096.
const readBurst = 256

func (r *responder) init(e *Engine) {
	r.e = e
	r.msgKind = packet.KindInvalid
}

// verdict is the outcome of checking and executing one request packet.
type verdict uint8

const (
	accepted   verdict = iota
	rnr                // no receive WQE: RNR NAK (RC), drop (UC, UD)
	invalidReq         // malformed or unsupported request: NAK invalid request, class C
	accessErr          // R_Key, range or access violation: NAK remote access error, class C
	lengthErr          // message longer than the receive WQE: local length error, class C
	localErr           // the receive WQE's own buffers fail: class A (remote operational error)
	invalidate         // SEND with Invalidate names a key that cannot be invalidated: class J
	cqOverflow         // the receive completion found the CQ full: the QP is in ERR already (class G)
)

// receiving reports whether a QP in state s accepts incoming requests.
func receiving(s qp.State) bool {
	switch s {
	case qp.StateRTR, qp.StateRTS, qp.StateSQD, qp.StateSQE:
		return true
	}
	return false
}

// refresh brings the responder in line with the QP's attributes: a new RTR (re)initialises the
// expected PSN, the MSN and the responder resources from rq_psn and max_dest_rd_atomic; RESET,
// INIT and ERR drop every message in progress.
func (r *responder) refresh(out *Output) {
	if r.e.q.AttrVersion() != r.version {
		r.derive(out)
	}
}

// derive brings the responder's state in line with the attributes if they changed since.
func (r *responder) derive(out *Output) {
	s := r.e.attrs(out)
	r.version = s.version
	if s.gen == r.gen {
		return
	}
	r.gen = s.gen
	a, resets := &s.attr, s.resets
	if !receiving(a.State) {
		r.stop(a.State == qp.StateErr)
		return
	}
	// A RESET in between, even one this engine never saw in a call, makes everything held stale:
	// the receive WQE was discarded with the queue, and rq_psn may be the same as before.
	if !r.started || a.RQPSN != r.rqPSN || resets != r.resets {
		r.stop(false)
		r.started, r.commEst = true, false
		r.rqPSN, r.resets = a.RQPSN, resets
		r.psn = packet.PSN(a.RQPSN)
		r.msn = 0
		r.nakSent = false
		r.pace.reset(r.psn)
		r.res.resize(int(a.MaxDestRdAtomic))
	} else if r.res.size() != int(a.MaxDestRdAtomic) {
		// SQD->SQD may change the number of responder resources.
		r.res.resize(int(a.MaxDestRdAtomic))
	}
	r.mtu = a.PathMTU.Bytes()
}

// stop forgets every message in progress. In ERR a receive WQE the responder still holds
// completes as flushed (a WQE of the QP's own receive queue was already flushed by the QP, which
// CompleteRecv reports as stale); in RESET it is discarded without a completion.
func (r *responder) stop(flush bool) {
	if r.haveWQE && flush {
		wc := cq.WC{Status: cq.WCWRFlushErr, Opcode: cq.OpcodeRecv}
		_ = r.e.q.CompleteRecv(&r.wqe, &wc, false)
	}
	r.haveWQE = false
	r.started = false
	r.msgKind = packet.KindInvalid
	r.ucDrop = false
	r.read.active = false
	r.ackDue = false
	r.res.clear()
}

// receive handles one request packet addressed to the QP.
func (r *responder) receive(now time.Time, p *packet.Parsed, from *packet.Envelope, out *Output) {
	c := &r.e.ctr
	r.refresh(out)
	if !r.started {
		c.Inc(counter.RcvdWrongState)
		return
	}
	op := p.Opcode()
	switch r.e.q.Type() {
	case qp.TypeRC:
		if op.Transport() != packet.TransportRC {
			c.Inc(counter.RcvdBadOpcode)
			return
		}
	case qp.TypeUC:
		if op.Transport() != packet.TransportUC {
			c.Inc(counter.RcvdBadOpcode)
			return
		}
	default:
		if op.Transport() != packet.TransportUD {
			c.Inc(counter.RcvdBadOpcode)
			return
		}
		r.receiveUD(p, from)
		return
	}
	if !r.e.at.pathOK || !fromPeer(&r.e.at.path, from) {
		c.Inc(counter.RcvdWrongPath)
		return
	}
	if r.e.at.attr.State == qp.StateRTR && !r.commEst {
		r.commEst = true
		r.e.q.RaiseEvent(qp.EventCommEst)
	}
	if r.e.q.Type() == qp.TypeUC {
		r.receiveUC(p)
		return
	}
	r.receiveRC(now, p, out)
}

// run continues an RDMA READ response that did not fit in one call and, once the QP entered ERR,
// flushes the receive WQE the responder holds.
func (r *responder) run(now time.Time, out *Output) {
	if !r.started && !r.haveWQE {
		return
	}
	r.refresh(out)
	if r.read.active {
		r.read.since = now
		r.continueRead(now, out)
	}
}

// deadline is, while an RDMA READ response is unfinished, the time of the last call (Run is due
// at once) or, when responses are paced, when the next run may send; otherwise zero.
func (r *responder) deadline() time.Time {
	switch {
	case !r.read.active:
		return time.Time{}
	case r.pace.paced():
		return r.pace.deadline()
	}
	return r.read.since
}

// receiveRC checks an RC request's PSN and opcode sequence, lets the operation check validity,
// resources, lengths and keys and execute, and answers it.
func (r *responder) receiveRC(now time.Time, p *packet.Parsed, out *Output) {
	if r.read.active && !r.retriesRead(p) {
		// Responses leave in PSN order, so the rest of the READ goes first, but at most one more
		// burst of it: a READ can be 2 GiB long, and one call's output must stay bounded. A
		// request that still finds it unfinished is dropped, as by a busy receiver, and comes
		// again with the requester's retransmission. (A requester that keeps within 128 unacked
		// PSNs, as rxe and gorxe do, sends nothing new before the last 128 packets of a long
		// READ.) A paced response goes on past its pace here; the next run waits for it.
		n := r.sendRead(out, readBurst)
		r.pace.charge(now, n, r.read.psn)
		if r.read.active {
			r.e.ctr.Inc(counter.RcvdBusy)
			return
		}
	}
	psn := p.BTH().PSN()
	switch d := psn.Diff(r.psn); {
	case d > 0:
		// A lost packet: ask for it once with a PSN sequence error NAK, then drop until it comes.
		if !r.nakSent {
			r.nakSent = true
			r.e.ctr.Inc(counter.OutOfSeqRequest)
			r.sendAck(packet.SyndromeNAKPSNSequenceError, r.psn, out)
		}
		return
	case d < 0:
		r.e.ctr.Inc(counter.DuplicateRequest)
		r.duplicate(now, p, out)
		return
	}
	r.nakSent = false
	op := p.Opcode()
	var v verdict
	if !r.inSequence(op) {
		v = invalidReq
	} else {
		switch op.Kind() {
		case packet.KindSend:
			v = r.send(p)
		case packet.KindRDMAWrite:
			v = r.write(p)
		case packet.KindRDMAReadRequest:
			v = r.readRequest(now, p, out)
		case packet.KindCompareSwap, packet.KindFetchAdd:
			v = r.atomic(p, out)
		case packet.KindAtomicWrite:
			v = r.atomicWrite(p, out)
		case packet.KindFlush:
			v = r.flush(p, out)
		default:
			v = invalidReq
		}
	}
	switch v {
	case accepted:
		if op.Kind() == packet.KindSend || op.Kind() == packet.KindRDMAWrite {
			r.psn = psn.Add(1)
			if p.BTH().AckReq() {
				r.ack(psn)
			}
		}
	case rnr:
		r.e.ctr.Inc(counter.SendRNRErr)
		r.sendAck(packet.SyndromeRNRNAK(r.e.at.attr.MinRNRTimer), psn, out)
	case cqOverflow:
		// Not acknowledged: the message was never reported.
	default:
		r.fail(v, psn, out)
	}
}

// inSequence reports whether op may follow the packets accepted so far: a FIRST or ONLY between
// messages, a MIDDLE or LAST of the same operation inside one.
func (r *responder) inSequence(op packet.Opcode) bool {
	pos := op.Position()
	if r.msgKind == packet.KindInvalid {
		return pos == packet.PositionFirst || pos == packet.PositionOnly
	}
	return op.Kind() == r.msgKind && (pos == packet.PositionMiddle || pos == packet.PositionLast)
}

// lengthOK applies the packet length rules of a multi-packet message (C9-92): FIRST and MIDDLE
// carry exactly one MTU, LAST 1 to MTU bytes, ONLY at most an MTU.
func (r *responder) lengthOK(pos packet.Position, n int) bool {
	switch pos {
	case packet.PositionFirst, packet.PositionMiddle:
		return n == r.mtu
	case packet.PositionLast:
		return n >= 1 && n <= r.mtu
	}
	return n <= r.mtu
}

// fail handles a request that cannot be executed and moves the QP to ERR: class C errors of RC
// (IBTA 9.9.3.1) and class A (local) errors of every type. The receive WQE in use, if any,
// completes in error, and an RC requester gets a NAK.
func (r *responder) fail(v verdict, psn packet.PSN, out *Output) {
	var (
		syn    packet.Syndrome
		status cq.Status
		event  qp.EventType
	)
	switch v {
	case accessErr:
		syn, status, event = packet.SyndromeNAKRemoteAccessError, cq.WCRemAccessErr, qp.EventQPAccessErr
	case lengthErr:
		syn, status, event = packet.SyndromeNAKInvalidRequest, cq.WCLocLenErr, qp.EventQPReqErr
	case localErr:
		// rxe completes with LOC_QP_OP_ERR; a receive buffer whose lkey fails its checks is a local
		// protection error in libibverbs' terms.
		syn, status, event = packet.SyndromeNAKRemoteOperationalError, cq.WCLocProtErr, qp.EventQPFatal
	case invalidate:
		// rxe acknowledges the message positively and only moves the QP to ERR; IBTA has the
		// failure answered with an invalid request NAK.
		syn, status, event = packet.SyndromeNAKInvalidRequest, cq.WCRemInvReqErr, qp.EventQPReqErr
	default:
		syn, status, event = packet.SyndromeNAKInvalidRequest, cq.WCRemInvReqErr, qp.EventQPReqErr
	}
	if r.e.q.Type() == qp.TypeRC {
		switch syn {
		case packet.SyndromeNAKRemoteAccessError:
			r.e.ctr.Inc(counter.SentAccessNAK)
		case packet.SyndromeNAKInvalidRequest:
			r.e.ctr.Inc(counter.SentInvReqNAK)
		}
		r.sendAck(syn, psn, out)
	}
	r.msgKind = packet.KindInvalid
	r.enterError(status)
	r.e.q.RaiseEvent(event)
	r.stop(true)
}

// complete reports the held receive WQE as done. A full CQ is a class G error: the QP enters ERR
// and complete returns false.
func (r *responder) complete(wc *cq.WC, solicited bool) bool {
	if !r.haveWQE {
		return true
	}
	r.haveWQE = false
	// rxe's rdma_recvs counts successful receive completions. It is counted before the completion
	// is delivered, so that a reader who polled the completion sees it counted, and taken back if
	// the completion is refused.
	counted := wc.Status == cq.WCSuccess
	if counted {
		r.e.ctr.Inc(counter.RDMARecvs)
	}
	r.e.completed()
	err := r.e.q.CompleteRecv(&r.wqe, wc, solicited)
	if err != nil && counted {
		r.e.ctr.Dec(counter.RDMARecvs)
	}
	if err != nil && errors.Is(err, qp.ErrStale) {
		return true // flushed or reset meanwhile: that completion was reported instead
	}
	r.e.completedInError(wc.Status, wc.Opcode, wc.WRID, true)
	if err != nil {
		from, moved := r.e.q.EnterError()
		r.e.enteredError(from, moved, wc.Status, true)
		r.stop(true)
		return false
	}
	return true
}

// enterError moves the QP to ERR after a class C or D error. A receive WQE held for the message the
// request belongs to completes with status in the same step (an RC responder holds one only for
// that message).
func (r *responder) enterError(status cq.Status) {
	if !r.haveWQE {
		from, moved := r.e.q.EnterError()
		r.e.enteredError(from, moved, status, false)
		return
	}
	r.haveWQE = false
	wc := cq.WC{Status: status, Opcode: cq.OpcodeRecv}
	r.e.completed()
	from, moved, err := r.e.q.FailRecv(&r.wqe, &wc)
	if !errors.Is(err, qp.ErrStale) {
		r.e.completedInError(wc.Status, wc.Opcode, wc.WRID, true)
	}
	r.e.enteredError(from, moved, status, err != nil && !errors.Is(err, qp.ErrStale))
}

// takeWQE makes sure a receive WQE is held for the next message, taking one from the receive
// queue or SRQ; false means none is posted.
func (r *responder) takeWQE() bool {
	if !r.haveWQE {
		r.haveWQE = r.e.q.PopRecv(&r.wqe)
	}
	return r.haveWQE
}

// messageDone counts a completed inbound message: MSN (C9-148: at execution for READ and atomics).
func (r *responder) messageDone() {
	r.msn = (r.msn + 1) & packet.PSNMask
}

// ack acknowledges the requests up to psn with the current MSN. The ACK goes out when the burst
// of packets being received ends, unless a later ACK replaces it first; any other response sends
// it before itself, so responses keep their PSN order.
func (r *responder) ack(psn packet.PSN) {
	r.ackDue, r.ackPSN, r.ackMSN = true, psn, r.msn
}

// flushAck sends the ACK that ack put off, if any.
func (r *responder) flushAck(out *Output) {
	if !r.ackDue {
		return
	}
	r.ackDue = false
	r.sendAckMSN(packet.SyndromeACKUnlimited, r.ackPSN, r.ackMSN, out)
}

// sendAck queues an ACKNOWLEDGE with syndrome syn for psn, carrying the current MSN.
func (r *responder) sendAck(syn packet.Syndrome, psn packet.PSN, out *Output) {
	r.sendAckMSN(syn, psn, r.msn, out)
}

func (r *responder) sendAckMSN(syn packet.Syndrome, psn packet.PSN, msn uint32, out *Output) {
	if !syn.IsACK() {
		r.e.note(Event{Kind: EventNAKSent, PSN: psn, Syndrome: syn})
	}
	var h packet.Headers
	h.BTH = packet.BTHFields{Opcode: packet.RCAcknowledge, PKey: packet.DefaultPKey, DestQP: r.e.at.attr.DestQPNum, PSN: psn}
	h.AETH = packet.AETHFields{Syndrome: syn, MSN: msn}
	pkt, _ := r.build(&h, 0, out)
	out.finish(pkt, &r.e.at.path)
}

// build starts a response packet, after the ACK put off for the burst if there is one.
func (r *responder) build(h *packet.Headers, payloadLen int, out *Output) (pkt, payload []byte) {
	r.flushAck(out)
	return out.build(h, payloadLen)
}

// fromPeer reports whether a packet that arrived on from was sent by the other end of path p and
// addressed to its local end. Ports are not compared: a peer may send from any UDP source port.
func fromPeer(p, from *packet.Envelope) bool {
	return sameHost(from.Src.Addr(), p.Dst.Addr()) && sameHost(from.Dst.Addr(), p.Src.Addr())
}
