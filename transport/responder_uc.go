package transport

import (
	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/packet"
)

// receiveUC handles a UC request (IBTA 9.8.3): no acknowledgements, and a lost packet costs the
// message it belongs to. After a PSN gap or a broken opcode sequence the responder drops packets
// until the next FIRST or ONLY, which starts a new message at whatever PSN it carries. The receive
// WQE of the lost message is kept for the next one when it came from the QP's own receive queue
// (class D); one taken from an SRQ completes in error at once (class E, see abandon). Errors are
// counted and dropped, except a receive WQE whose own buffers fail (class A), which moves the QP
// to ERR.
func (r *responder) receiveUC(p *packet.Parsed) {
	c := &r.e.ctr
	op := p.Opcode()
	psn := p.BTH().PSN()
	if psn != r.psn || r.ucDrop || !r.inSequence(op) {
		// Whatever message was open is lost: a packet of it is missing.
		r.abandon(cq.WCRemInvReqErr)
		if !op.StartsMessage() {
			// The rest of a message already dropped is not counted again.
			switch {
			case psn != r.psn:
				c.Inc(counter.OutOfSeqRequest)
			case !r.ucDrop:
				c.Inc(counter.RcvdBadOpcode)
			}
			r.msgKind = packet.KindInvalid
			r.ucDrop = true
			r.psn = psn.Add(1)
			return
		}
		r.msgKind = packet.KindInvalid
		r.ucDrop = false
	}
	var v verdict
	switch op.Kind() {
	case packet.KindSend:
		v = r.send(p)
	case packet.KindRDMAWrite:
		v = r.write(p)
	default:
		v = invalidReq
	}
	r.psn = psn.Add(1)
	switch v {
	case accepted, cqOverflow:
		return
	case rnr:
		c.Inc(counter.RcvdNoRecvWQE)
	case lengthErr:
		c.Inc(counter.RcvdTooLong)
		r.abandon(cq.WCLocLenErr)
	case accessErr:
		c.Inc(counter.RcvdBadAccess)
		r.abandon(cq.WCRemAccessErr)
	case localErr:
		r.fail(v, psn, nil)
		return
	default:
		c.Inc(counter.RcvdBadOpcode)
		r.abandon(cq.WCRemInvReqErr)
	}
	r.msgKind = packet.KindInvalid
	r.ucDrop = !op.EndsMessage()
}

// abandon handles the receive WQE of a UC or UD message the responder drops after taking it.
// A WQE of the QP's own receive queue stays held and takes the next message (IBTA class D: the
// message is silently dropped, the WQE is not consumed). A WQE from an SRQ cannot go back to the
// SRQ, which other QPs share, so it completes now with status st and the QP stays in its state
// (IBTA class E). rxe does the same, but reports every class E drop as REM_INV_REQ_ERR except
// R_Key violations; gorxe reports a message too long for the WQE as LOC_LEN_ERR, the status IBTA
// gives a receive buffer too small for its message (and gorxe's RC responder uses too).
func (r *responder) abandon(st cq.Status) {
	if !r.haveWQE || r.e.q.SRQ() == nil {
		return
	}
	wc := cq.WC{Status: st, Opcode: cq.OpcodeRecv}
	r.complete(&wc, false)
}
