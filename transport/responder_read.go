package transport

import (
	"errors"
	"time"

	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
)

// readReply is the RDMA READ response being sent: the request it answers and how far it got.
type readReply struct {
	active bool
	since  time.Time // the last call that sent part of the response
	psn    packet.PSN
	va     uint64
	rkey   uint32
	resid  uint32
	first  bool       // the next packet is the first of the response
	msn    uint32     // the MSN the response carries
	origin packet.PSN // first PSN of the READ answered: its responder resource
}

// readPackets is the number of response packets, and so of PSNs, an RDMA READ of length bytes
// takes: at least one, for a zero-length read.
func (r *responder) readPackets(length uint32) uint32 {
	return max(1, (length+uint32(r.mtu)-1)/uint32(r.mtu))
}

// readRequest executes a new RDMA READ request: it checks the request, records it in a responder
// resource and starts the response.
func (r *responder) readRequest(now time.Time, p *packet.Parsed, out *Output) verdict {
	if !r.e.at.attr.AccessFlags.Has(mr.AccessRemoteRead) || r.res.size() == 0 {
		return invalidReq
	}
	reth := p.RETH()
	va, rkey, length := reth.VirtualAddress(), reth.RKey(), reth.DMALength()
	if length > maxMessageLen {
		return invalidReq
	}
	span, err := r.e.dev.Mem.LookupRemote(rkey, r.e.q.PD(), r.e.q.QPN(), mr.AccessRemoteRead, va, uint64(length))
	if err != nil {
		return accessErr
	}
	span.Release()
	psn := p.BTH().PSN()
	npkts := r.readPackets(length)
	res := r.res.take()
	*res = resource{
		kind: packet.KindRDMAReadRequest, firstPSN: psn, lastPSN: psn.Add(npkts - 1),
		va: va, rkey: rkey, length: length,
	}
	r.psn = psn.Add(npkts)
	r.messageDone()
	r.startRead(now, res, psn, va, length, out)
	return accepted
}

// startRead begins the response to the READ recorded in res: length bytes at va, with PSNs from
// psn up.
func (r *responder) startRead(now time.Time, res *resource, psn packet.PSN, va uint64, length uint32, out *Output) {
	if !r.read.active {
		r.pace.begin(now, psn)
	}
	r.read = readReply{
		active: true, since: now, psn: psn, va: va, rkey: res.rkey, resid: length, first: true, msn: r.msn,
		origin: res.firstPSN,
	}
	r.continueRead(now, out)
}

// continueRead sends as much of the READ response under way as the pace allows at now.
func (r *responder) continueRead(now time.Time, out *Output) {
	n := r.sendRead(out, r.pace.budget(now))
	r.pace.charge(now, n, r.read.psn)
}

// retriesRead reports whether p asks again for READ responses up to the one being sent: the
// requester lost a response of this READ or an earlier one and goes back to it, so it would
// discard the rest of the current answer, and the retry's answer replaces it.
func (r *responder) retriesRead(p *packet.Parsed) bool {
	psn := p.BTH().PSN()
	if p.Opcode().Kind() != packet.KindRDMAReadRequest || psn.Diff(r.psn) >= 0 {
		return false
	}
	res := r.res.find(psn)
	return res != nil && res.kind == packet.KindRDMAReadRequest &&
		(res.firstPSN == r.read.origin || psn.LessThan(r.read.psn))
}

// sendRead builds up to budget response packets (all of them if budget is negative), reading
// straight from the region into the packet buffers, and returns how many it built. The region
// is looked up again for every burst, so one deregistered or invalidated meanwhile ends the
// response with a remote access error.
func (r *responder) sendRead(out *Output, budget int) int {
	if budget == 0 {
		return 0
	}
	rr := &r.read
	span, err := r.e.dev.Mem.LookupRemote(rr.rkey, r.e.q.PD(), r.e.q.QPN(), mr.AccessRemoteRead, rr.va, uint64(rr.resid))
	if err != nil {
		rr.active = false
		r.fail(accessErr, rr.psn, out)
		return 0
	}
	sent := 0
	mtu := uint32(r.mtu)
	var h packet.Headers
	h.BTH = packet.BTHFields{PKey: packet.DefaultPKey, DestQP: r.e.at.attr.DestQPNum}
	h.AETH = packet.AETHFields{Syndrome: packet.SyndromeACKUnlimited, MSN: rr.msn}
	var off uint64
	for ; budget != 0 && rr.active; budget-- {
		n := min(rr.resid, mtu)
		last := rr.resid <= mtu
		switch {
		case rr.first && last:
			h.BTH.Opcode = packet.RCRDMAReadResponseOnly
		case rr.first:
			h.BTH.Opcode = packet.RCRDMAReadResponseFirst
		case last:
			h.BTH.Opcode = packet.RCRDMAReadResponseLast
		default:
			h.BTH.Opcode = packet.RCRDMAReadResponseMiddle
		}
		h.BTH.PSN = rr.psn
		pkt, payload := r.build(&h, int(n), out)
		var view []byte
		if out.wantsView(int(n)) {
			view, _ = span.View(off, int(n))
		}
		if view == nil {
			span.CopyOut(payload, off)
		}
		out.finishPayload(pkt, h.BTH.Opcode.HeaderLen(), view, &r.e.at.path)
		off += uint64(n)
		rr.resid -= n
		rr.psn = rr.psn.Add(1)
		rr.first = false
		rr.active = !last
		sent++
	}
	span.Release()
	rr.va += off
	return sent
}

// atomic executes a COMPARE_SWAP or FETCH_ADD and answers with the original value.
func (r *responder) atomic(p *packet.Parsed, out *Output) verdict {
	if !r.e.at.attr.AccessFlags.Has(mr.AccessRemoteAtomic) || r.res.size() == 0 {
		return invalidReq
	}
	ae := p.AtomicETH()
	va := ae.VirtualAddress()
	if va&7 != 0 {
		// IBTA 9.4.5: atomics need a naturally aligned target; the request is invalid.
		return invalidReq
	}
	mem, pd, qpn := r.e.dev.Mem, r.e.q.PD(), r.e.q.QPN()
	var (
		orig uint64
		err  error
	)
	kind := p.Opcode().Kind()
	if kind == packet.KindCompareSwap {
		orig, err = mem.CompareSwap(ae.RKey(), pd, qpn, va, ae.CompareData(), ae.SwapAddData())
	} else {
		orig, err = mem.FetchAdd(ae.RKey(), pd, qpn, va, ae.SwapAddData())
	}
	if err != nil {
		return memVerdict(err)
	}
	psn := p.BTH().PSN()
	*r.res.take() = resource{kind: kind, firstPSN: psn, lastPSN: psn, orig: orig}
	r.psn = psn.Add(1)
	r.messageDone()
	r.sendAtomicAck(psn, orig, out)
	return accepted
}

// atomicWrite executes an ATOMIC_WRITE (IBTA 1.5): the 8 payload bytes stored at once.
func (r *responder) atomicWrite(p *packet.Parsed, out *Output) verdict {
	if !r.e.at.attr.AccessFlags.Has(mr.AccessRemoteWrite) || r.res.size() == 0 {
		return invalidReq
	}
	reth := p.RETH()
	va := reth.VirtualAddress()
	if va&7 != 0 {
		return invalidReq
	}
	if err := r.e.dev.Mem.AtomicWrite(reth.RKey(), r.e.q.PD(), r.e.q.QPN(), va, [8]byte(p.Payload())); err != nil {
		return memVerdict(err)
	}
	r.finishPlacement(packet.KindAtomicWrite, p.BTH().PSN(), out)
	return accepted
}

// flush executes a FLUSH (IBTA 1.5): the QP must grant the placement types it asks for.
func (r *responder) flush(p *packet.Parsed, out *Output) verdict {
	feth := p.FETH()
	plt, sel := feth.PlacementType(), feth.Selectivity()
	var need mr.Access
	if plt&packet.FlushGlobalVisibility != 0 {
		need |= mr.AccessFlushGlobal
	}
	if plt&packet.FlushPersistence != 0 {
		need |= mr.AccessFlushPersistent
	}
	if need == 0 || plt&^(packet.FlushGlobalVisibility|packet.FlushPersistence) != 0 ||
		sel > packet.FlushMemoryRegion || !r.e.at.attr.AccessFlags.Has(need) || r.res.size() == 0 {
		return invalidReq
	}
	reth := p.RETH()
	err := r.e.dev.Mem.Flush(reth.RKey(), r.e.q.PD(), r.e.q.QPN(), need, mr.FlushLevel(sel),
		reth.VirtualAddress(), uint64(reth.DMALength()))
	if err != nil {
		return memVerdict(err)
	}
	r.finishPlacement(packet.KindFlush, p.BTH().PSN(), out)
	return accepted
}

// finishPlacement records an executed ATOMIC_WRITE or FLUSH and answers it.
func (r *responder) finishPlacement(kind packet.Kind, psn packet.PSN, out *Output) {
	*r.res.take() = resource{kind: kind, firstPSN: psn, lastPSN: psn}
	r.psn = psn.Add(1)
	r.messageDone()
	r.sendPlacementAck(psn, out)
}

// memVerdict maps an mr error of a remote access to its NAK: a misaligned atomic target is an
// invalid request, everything else a remote access error.
func memVerdict(err error) verdict {
	if errors.Is(err, mr.ErrMisaligned) {
		return invalidReq
	}
	return accessErr
}

// sendAtomicAck queues the ATOMIC_ACKNOWLEDGE of the atomic at psn.
func (r *responder) sendAtomicAck(psn packet.PSN, orig uint64, out *Output) {
	var h packet.Headers
	h.BTH = packet.BTHFields{Opcode: packet.RCAtomicAcknowledge, PKey: packet.DefaultPKey, DestQP: r.e.at.attr.DestQPNum, PSN: psn}
	h.AETH = packet.AETHFields{Syndrome: packet.SyndromeACKUnlimited, MSN: r.msn}
	h.AtomicAckETH = packet.AtomicAckETHFields{OriginalRemoteData: orig}
	pkt, _ := r.build(&h, 0, out)
	out.finish(pkt, &r.e.at.path)
}

// sendPlacementAck answers an ATOMIC_WRITE or FLUSH with the zero-length RDMA READ response
// IBTA 1.5 prescribes.
func (r *responder) sendPlacementAck(psn packet.PSN, out *Output) {
	var h packet.Headers
	h.BTH = packet.BTHFields{Opcode: packet.RCRDMAReadResponseOnly, PKey: packet.DefaultPKey, DestQP: r.e.at.attr.DestQPNum, PSN: psn}
	h.AETH = packet.AETHFields{Syndrome: packet.SyndromeACKUnlimited, MSN: r.msn}
	pkt, _ := r.build(&h, 0, out)
	out.finish(pkt, &r.e.at.path)
}

// duplicate answers a request whose PSN is older than the expected one (IBTA 9.7.5.1): the
// requester retried because a response was lost. Nothing is executed twice.
func (r *responder) duplicate(now time.Time, p *packet.Parsed, out *Output) {
	psn := p.BTH().PSN()
	kind := p.Opcode().Kind()
	switch kind {
	case packet.KindSend, packet.KindRDMAWrite:
		// C9-105: acknowledge again up to the last request accepted.
		r.ack(r.psn.Sub(1))
		return
	}
	res := r.res.find(psn)
	if res == nil || res.kind != kind {
		return // no record of the request: drop it (class D)
	}
	switch kind {
	case packet.KindRDMAReadRequest:
		// A retried READ may ask for the tail of the original only, from the PSN where the lost
		// responses begin; anything else is not a retry of this request.
		reth := p.RETH()
		va, length := reth.VirtualAddress(), reth.DMALength()
		if reth.RKey() != res.rkey || va < res.va || va-res.va > uint64(res.length) ||
			uint64(length) > uint64(res.length)-(va-res.va) ||
			res.lastPSN.LessThan(psn.Add(r.readPackets(length)-1)) {
			return
		}
		// rxe continues a replay with MIDDLE and LAST packets; the retried request is a request of
		// its own, answered from its first packet (FIRST or ONLY). The requester lost responses:
		// the pace slows down.
		r.pace.repeated(now, psn)
		r.startRead(now, res, psn, va, length, out)
	case packet.KindCompareSwap, packet.KindFetchAdd:
		r.sendAtomicAck(psn, res.orig, out)
	case packet.KindAtomicWrite, packet.KindFlush:
		r.sendPlacementAck(psn, out)
	}
}
