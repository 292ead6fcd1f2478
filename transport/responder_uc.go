package transport

import (
	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/packet"
)

// receiveUC handles a UC request (IBTA 9.8.3): no acknowledgements, and a lost packet costs the
// message it belongs to. After a PSN gap or a broken opcode sequence the responder drops packets
// until the next FIRST or ONLY, which starts a new message at whatever PSN it carries; the receive
// WQE of the lost message is kept and receives the next one. Errors are counted and dropped,
// except a receive WQE whose own buffers fail (class A), which moves the QP to ERR.
func (r *responder) receiveUC(p *packet.Parsed) {
	c := &r.e.ctr
	op := p.Opcode()
	psn := p.BTH().PSN()
	if psn != r.psn || r.ucDrop || !r.inSequence(op) {
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
	case accessErr:
		c.Inc(counter.RcvdBadAccess)
	case localErr:
		r.fail(v, psn, nil)
		return
	default:
		c.Inc(counter.RcvdBadOpcode)
	}
	r.msgKind = packet.KindInvalid
	r.ucDrop = !op.EndsMessage()
}
