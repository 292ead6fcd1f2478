package transport

import (
	"math"
	"net/netip"

	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

// accessLocalWrite is what READ and atomic result buffers need.
const accessLocalWrite = mr.AccessLocalWrite

// sendPacket builds and queues the next packet of w: the one whose payload starts at
// w.Progress.Sent. It returns the status to fail w with when a local check fails.
func (r *requester) sendPacket(w *qp.SendWQE, out *Output) (cq.Status, bool) {
	p := &w.Progress
	wr := &w.WR
	mtu := uint64(r.a.mtu)
	off := p.Sent
	psn := packet.PSN(p.FirstPSN).Add(uint32(off / mtu))
	last := true
	n := uint64(0) // payload bytes from the WQE's data
	var h packet.Headers
	h.BTH = packet.BTHFields{PKey: packet.DefaultPKey, DestQP: r.a.destQPN, PSN: psn}
	// The path resolves: a connected QP's was checked when Modify set it, before the QP could
	// send, and an address handle exists only with its route (qp.Table.CreateAH).
	path := &r.e.at.path

	switch r.a.typ {
	case qp.TypeUD, qp.TypeGSI:
		udPath := r.datagramHeaders(w, &h)
		path = &udPath
		n = w.Length
		h.BTH.Opcode = packet.UDSendOnly
		if wr.Opcode == qp.WRSendWithImm {
			h.BTH.Opcode = packet.UDSendOnlyWithImmediate
			h.ImmDt.ImmediateData = wr.ImmData
		}
		h.BTH.SolicitedEvent = wr.Flags&qp.SendSolicited != 0
	default:
		t := packet.TransportRC
		if r.a.typ == qp.TypeUC {
			t = packet.TransportUC
		}
		var ok bool
		if n, last, ok = r.requestHeaders(w, t, off, &h); !ok {
			return cq.WCLocQPOpErr, false
		}
	}

	consumed := uint32(1)
	if wr.Opcode == qp.WRRDMARead {
		// The request reserves a PSN for every response packet still to come.
		consumed = uint32(packet.PSN(p.LastPSN).Diff(psn)) + 1
	}
	ackReq := false
	if r.a.typ == qp.TypeRC {
		r.pktsSinceAck++
		// Ask for an acknowledgement at the end of a message, every pktsPerAck packets (rxe's
		// rule), and, while the window is shrunk after a timeout, on the packet that fills it, so
		// it reopens without waiting for the retransmit timer.
		fills := r.limit != 0 && uint32(r.psn.Add(consumed).Sub(uint32(r.e.comp.psn))) >= r.limit
		if last || r.pktsSinceAck >= pktsPerAck || fills {
			ackReq = true
			r.pktsSinceAck = 0
		}
	}
	// AckReq asks the responder to schedule an acknowledgement (IBTA 9.2.3); only RC responders
	// send any, so on the unacknowledged services no receiver acts on the bit and its value is the
	// sender's to choose. gorxe chooses kernel rxe's, for byte-for-byte equal packets: clear on UC
	// and UD (rxe since "Dont set BTH_ACK_MASK for UC or UD QPs", in the 6.1 stable kernels too),
	// set on every GSI (QP1) message, which that rule does not exclude: kernel captures show each
	// CM MAD with A=1 and each UD pingpong datagram with A=0.
	if r.a.typ == qp.TypeGSI && last {
		ackReq = true
	}
	h.BTH.AckReq = ackReq

	if st, ok := r.emit(w, out, &h, int(n), path); !ok {
		return st, false
	}

	p.Sent = off + n
	if wr.Opcode == qp.WRRDMARead {
		p.Sent = w.Length
	}
	r.psn = psn.Add(consumed)
	if r.tip.LessThan(r.psn) {
		r.tip = r.psn
	}
	if last {
		p.State = wqeSent
		if r.a.typ != qp.TypeRC {
			// Nothing acknowledges UC or UD: the send is complete once its last packet is out.
			p.State = wqeDone
		}
	}
	return 0, true
}

// emit encodes the packet, copies its payload from the WQE's data straight into the output
// buffer, or leaves it in registered memory when the output takes views, and queues it.
func (r *requester) emit(w *qp.SendWQE, out *Output, h *packet.Headers, n int, path *packet.Envelope) (cq.Status, bool) {
	wr := &w.WR
	off := w.Progress.Sent
	if wr.Opcode == qp.WRAtomicWrite {
		n = len(wr.AtomicWrite)
	}
	pkt, payload := out.build(h, n)
	var view []byte // the payload where it lies in registered memory, instead of copied
	switch {
	case wr.Opcode == qp.WRAtomicWrite:
		copy(payload, wr.AtomicWrite[:])
	case n == 0:
	case wr.Flags&qp.SendInline != 0:
		copy(payload, wr.InlineData[off:])
	default:
		c := &w.Progress.Cursor
		if c.Pos() != off {
			if err := c.Seek(off); err != nil {
				return cq.WCLocLenErr, false
			}
		}
		if out.wantsView(n) {
			var err error
			if view, _, err = r.e.dev.Mem.View(c, r.e.q.PD(), n); err != nil {
				return localStatus(err), false
			}
		}
		if view == nil {
			if err := r.e.dev.Mem.Gather(payload, c, r.e.q.PD()); err != nil {
				return localStatus(err), false
			}
		}
	}
	out.finishPayload(pkt, h.BTH.Opcode.HeaderLen(), view, path)
	r.e.ctr.Add(counter.SentBytes, uint64(n))
	return 0, true
}

// requestHeaders fills the opcode and extension headers of the RC or UC packet of w whose
// payload starts at off, and returns its payload length and whether it ends the message.
// It returns ok false for an operation the transport has no opcode for.
func (r *requester) requestHeaders(w *qp.SendWQE, t packet.Transport, off uint64, h *packet.Headers) (n uint64, last, ok bool) {
	wr := &w.WR
	switch wr.Opcode {
	case qp.WRSend, qp.WRSendWithImm, qp.WRSendWithInv, qp.WRRDMAWrite, qp.WRRDMAWriteWithImm:
		n = min(uint64(r.a.mtu), w.Length-off)
		first := off == 0
		last = off+n == w.Length
		op := packet.NewOpcode(t, dataOperation(wr.Opcode, first, last))
		if !op.Valid() {
			return 0, false, false
		}
		h.BTH.Opcode = op
		hs := op.Headers()
		if hs.Has(packet.HeaderRETH) {
			h.RETH = packet.RETHFields{VirtualAddress: wr.RDMA.RemoteAddr, RKey: wr.RDMA.RKey, DMALength: uint32(w.Length)}
		}
		if hs.Has(packet.HeaderImmDt) {
			h.ImmDt.ImmediateData = wr.ImmData
		}
		if hs.Has(packet.HeaderIETH) {
			h.IETH.RKey = wr.InvalidateRKey
		}
		// The solicited event bit goes on the last packet of a message that consumes a receive
		// WQE: a SEND or an RDMA WRITE with immediate.
		h.BTH.SolicitedEvent = last && wr.Flags&qp.SendSolicited != 0 && wr.Opcode != qp.WRRDMAWrite
		return n, last, true
	case qp.WRRDMARead:
		h.BTH.Opcode = packet.RCRDMAReadRequest
		h.RETH = packet.RETHFields{
			VirtualAddress: wr.RDMA.RemoteAddr + off, RKey: wr.RDMA.RKey, DMALength: uint32(w.Length - off),
		}
	case qp.WRAtomicCmpAndSwp:
		h.BTH.Opcode = packet.RCCompareSwap
		h.AtomicETH = packet.AtomicETHFields{
			VirtualAddress: wr.Atomic.RemoteAddr, RKey: wr.Atomic.RKey,
			SwapAddData: wr.Atomic.Swap, CompareData: wr.Atomic.CompareAdd,
		}
	case qp.WRAtomicFetchAndAdd:
		h.BTH.Opcode = packet.RCFetchAdd
		h.AtomicETH = packet.AtomicETHFields{
			VirtualAddress: wr.Atomic.RemoteAddr, RKey: wr.Atomic.RKey, SwapAddData: wr.Atomic.CompareAdd,
		}
	case qp.WRAtomicWrite:
		h.BTH.Opcode = packet.RCAtomicWrite
		h.RETH = packet.RETHFields{VirtualAddress: wr.RDMA.RemoteAddr, RKey: wr.RDMA.RKey, DMALength: 8}
	case qp.WRFlush:
		h.BTH.Opcode = packet.RCFlush
		h.FETH = packet.FETHFields{PlacementType: uint8(wr.Flush.Type), Selectivity: uint8(wr.Flush.Level)}
		h.RETH = packet.RETHFields{
			VirtualAddress: wr.RDMA.RemoteAddr, RKey: wr.RDMA.RKey,
			DMALength: uint32(min(wr.Flush.Length, math.MaxUint32)),
		}
	default:
		return 0, false, false
	}
	if t != packet.TransportRC {
		return 0, false, false
	}
	return 0, true, true
}

// datagramHeaders fills the BTH and DETH of a UD or GSI packet and returns the path to the
// work request's address handle, resolved when the handle was created.
func (r *requester) datagramHeaders(w *qp.SendWQE, h *packet.Headers) packet.Envelope {
	wr := &w.WR
	path := withSourcePort(w.AH.Route(), packet.DefaultUDPSourcePort(r.a.qpn))
	qkey := wr.UD.RemoteQKey
	if qkey&0x80000000 != 0 {
		// IBTA 10.2.5: a Q_Key with the high bit set in the work request means "use the QP's".
		// The GSI QP's Q_Key is the well-known 0x80010000 (which itself has the high bit set).
		qkey = r.a.qkey
		if r.a.typ == qp.TypeGSI && qkey == 0 {
			qkey = packet.GSIQKey
		}
	}
	h.BTH.DestQP = wr.UD.RemoteQPN & packet.QPNMask
	if path.Dst.Addr().IsMulticast() {
		h.BTH.DestQP = packet.MulticastQPN
	}
	// GSI: the P_Key comes from the work request's pkey_index; gorxe's table holds only the
	// default key, so every index sends 0xFFFF.
	h.DETH = packet.DETHFields{QKey: qkey, SrcQP: r.a.qpn}
	return path
}

// dataOperation returns the SEND or RDMA WRITE operation for a packet at the given position.
func dataOperation(op qp.WROpcode, first, last bool) packet.Operation {
	pos := 0 // middle
	switch {
	case first && last:
		pos = 3
	case first:
		pos = 1
	case last:
		pos = 2
	}
	return dataOperations[op][pos]
}

// dataOperations lists, per data-carrying work request, its MIDDLE, FIRST, LAST and ONLY
// operations.
var dataOperations = [...][4]packet.Operation{
	qp.WRSend: {packet.OperationSendMiddle, packet.OperationSendFirst,
		packet.OperationSendLast, packet.OperationSendOnly},
	qp.WRSendWithImm: {packet.OperationSendMiddle, packet.OperationSendFirst,
		packet.OperationSendLastWithImmediate, packet.OperationSendOnlyWithImmediate},
	qp.WRSendWithInv: {packet.OperationSendMiddle, packet.OperationSendFirst,
		packet.OperationSendLastWithInvalidate, packet.OperationSendOnlyWithInvalidate},
	qp.WRRDMAWrite: {packet.OperationRDMAWriteMiddle, packet.OperationRDMAWriteFirst,
		packet.OperationRDMAWriteLast, packet.OperationRDMAWriteOnly},
	qp.WRRDMAWriteWithImm: {packet.OperationRDMAWriteMiddle, packet.OperationRDMAWriteFirst,
		packet.OperationRDMAWriteLastWithImmediate, packet.OperationRDMAWriteOnlyWithImmediate},
}

// needsResponse reports whether a work request is answered with data or a result rather than a
// plain ACK: READ, the atomics, ATOMIC_WRITE and FLUSH. They take responder resources, so the
// initiator depth (max_rd_atomic) limits them, and an ACK that passes one is an implicit NAK.
func needsResponse(op qp.WROpcode) bool {
	switch op {
	case qp.WRRDMARead, qp.WRAtomicCmpAndSwp, qp.WRAtomicFetchAndAdd, qp.WRAtomicWrite, qp.WRFlush:
		return true
	}
	return false
}

// isResultOp reports whether the response carries data for the local SGEs (READ and atomics).
func isResultOp(op qp.WROpcode) bool {
	return op == qp.WRRDMARead || op.IsAtomic()
}

// isLocalOp reports whether a work request is executed locally without packets.
func isLocalOp(op qp.WROpcode) bool {
	return op == qp.WRLocalInv || op == qp.WRRegMR || op == qp.WRBindMW
}

// localStatus maps an mr error met on local memory to a completion status.
func localStatus(err error) cq.Status {
	if err == mr.ErrLength {
		return cq.WCLocLenErr
	}
	return cq.WCLocProtErr
}

// netipAddrPort turns a GID into an address and port; IPv4-mapped GIDs become IPv4 addresses.
func netipAddrPort(gid [16]byte, port uint16) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom16(gid).Unmap(), port)
}

// addrPort pairs an address, unmapped to IPv4 where it is IPv4-mapped, with a port.
func addrPort(a netip.Addr, port uint16) netip.AddrPort {
	return netip.AddrPortFrom(a.Unmap(), port)
}
