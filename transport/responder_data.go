package transport

import (
	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
)

// send places one SEND packet of a connected QP into the receive WQE of its message, taking a WQE
// at the first packet, and completes the WQE at the last.
func (r *responder) send(p *packet.Parsed) verdict {
	op := p.Opcode()
	pos := op.Position()
	payload := p.Payload()
	if !r.lengthOK(pos, len(payload)) {
		return invalidReq
	}
	if pos == packet.PositionFirst || pos == packet.PositionOnly {
		if !r.takeWQE() {
			return rnr
		}
		r.cur.Reset(r.wqe.SGL)
	}
	if uint64(len(payload)) > r.cur.Remaining() {
		return lengthErr
	}
	if err := r.e.dev.Mem.Scatter(&r.cur, r.e.q.PD(), payload); err != nil {
		return localErr
	}
	r.e.ctr.Add(counter.RcvdBytes, uint64(len(payload)))
	if pos == packet.PositionFirst || pos == packet.PositionMiddle {
		r.msgKind = packet.KindSend
		return accepted
	}
	r.msgKind = packet.KindInvalid
	wc := cq.WC{Status: cq.WCSuccess, Opcode: cq.OpcodeRecv, ByteLen: uint32(r.cur.Pos())}
	if op.HasImmediate() {
		wc.ImmData = p.ImmDt().ImmediateData()
		wc.WCFlags |= cq.WCFlagWithImm
	}
	if op.HasInvalidate() {
		// The data is placed; the key is invalidated before the completion reports the message.
		rkey := p.IETH().RKey()
		if err := r.e.dev.Mem.RemoteInvalidate(r.e.q.PD(), r.e.q.QPN(), rkey); err != nil {
			return invalidate
		}
		wc.InvalidatedRKey = rkey
		wc.WCFlags |= cq.WCFlagWithInv
	}
	r.messageDone()
	if !r.complete(&wc, p.BTH().SolicitedEvent()) {
		return cqOverflow
	}
	return accepted
}

// maxMessageLen is the longest message IBTA allows (2^31 bytes, C9-94).
const maxMessageLen = 1 << 31

// write places one RDMA WRITE packet of a connected QP into the memory its RETH named. The first
// packet checks the R_Key against the whole range, so a bad request leaves memory untouched; every
// packet looks its bytes up again, so a region invalidated in the middle stops the message. A
// WRITE with immediate consumes a receive WQE at its last packet.
func (r *responder) write(p *packet.Parsed) verdict {
	if !r.e.at.attr.AccessFlags.Has(mr.AccessRemoteWrite) {
		return invalidReq
	}
	op := p.Opcode()
	pos := op.Position()
	payload := p.Payload()
	n := uint32(len(payload))
	if !r.lengthOK(pos, len(payload)) {
		return invalidReq
	}
	mem, pd, qpn := r.e.dev.Mem, r.e.q.PD(), r.e.q.QPN()
	if pos == packet.PositionFirst || pos == packet.PositionOnly {
		reth := p.RETH()
		r.writeVA, r.writeRKey = reth.VirtualAddress(), reth.RKey()
		r.writeLen = reth.DMALength()
		r.writeResid = r.writeLen
		if r.writeLen > maxMessageLen {
			return invalidReq
		}
		if pos == packet.PositionFirst {
			span, err := mem.LookupRemote(r.writeRKey, pd, qpn, mr.AccessRemoteWrite, r.writeVA, uint64(r.writeLen))
			if err != nil {
				return accessErr
			}
			span.Release()
		}
	}
	// FIRST and MIDDLE packets leave bytes for later packets; LAST and ONLY carry exactly the rest.
	if pos == packet.PositionFirst || pos == packet.PositionMiddle {
		if n >= r.writeResid {
			return invalidReq
		}
	} else if n != r.writeResid {
		return invalidReq
	}
	if op.HasImmediate() && !r.takeWQE() {
		return rnr
	}
	span, err := mem.LookupRemote(r.writeRKey, pd, qpn, mr.AccessRemoteWrite, r.writeVA, uint64(n))
	if err != nil {
		return accessErr
	}
	span.CopyIn(0, payload)
	span.Release()
	r.writeVA += uint64(n)
	r.writeResid -= n
	r.e.ctr.Add(counter.RcvdBytes, uint64(n))
	if pos == packet.PositionFirst || pos == packet.PositionMiddle {
		r.msgKind = packet.KindRDMAWrite
		return accepted
	}
	r.msgKind = packet.KindInvalid
	r.messageDone()
	if op.HasImmediate() {
		wc := cq.WC{
			Status: cq.WCSuccess, Opcode: cq.OpcodeRecvRDMAWithImm, ByteLen: r.writeLen,
			ImmData: p.ImmDt().ImmediateData(), WCFlags: cq.WCFlagWithImm,
		}
		if !r.complete(&wc, p.BTH().SolicitedEvent()) {
			return cqOverflow
		}
	}
	return accepted
}
