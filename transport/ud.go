package transport

import (
	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

// receiveUD delivers a UD or GSI datagram (a SEND_ONLY with or without immediate) into the next
// receive WQE: the network header area, then the payload. There is no acknowledgement; a datagram
// with the wrong Q_Key, without a receive WQE or too long for it is counted and dropped. A WQE
// taken for a datagram too long for it serves the next datagram, unless it came from an SRQ: then
// it completes with LOC_LEN_ERR (see abandon). Multicast datagrams (destination QPN
// 0xFFFFFF) arrive here once per attached QP, handed out by the device.
func (r *responder) receiveUD(p *packet.Parsed, from *packet.Envelope) {
	c := &r.e.ctr
	deth := p.DETH()
	qkey := r.e.at.attr.QKey
	if r.e.q.Type() == qp.TypeGSI {
		qkey = packet.GSIQKey
	}
	if deth.QKey() != qkey {
		c.Inc(counter.QKeyViolation)
		return
	}
	if !r.takeWQE() {
		c.Inc(counter.RcvdNoRecvWQE)
		return
	}
	payload := p.Payload()
	if uint64(len(payload))+packet.GRHSize > r.wqe.Length {
		c.Inc(counter.RcvdTooLong)
		r.abandon(cq.WCLocLenErr)
		return
	}
	var grh [packet.GRHSize]byte
	putNetworkHeader(&grh, from, len(p.Bytes()))
	mem, pd := r.e.dev.Mem, r.e.q.PD()
	r.cur.Reset(r.wqe.SGL)
	err := mem.Scatter(&r.cur, pd, grh[:])
	if err == nil {
		err = mem.Scatter(&r.cur, pd, payload)
	}
	if err != nil {
		r.fail(localErr, p.BTH().PSN(), nil)
		return
	}
	c.Add(counter.RcvdBytes, uint64(len(payload)))
	wc := cq.WC{
		Status: cq.WCSuccess, Opcode: cq.OpcodeRecv, ByteLen: uint32(r.cur.Pos()),
		SrcQP: deth.SrcQP(), WCFlags: cq.WCFlagGRH, SL: networkHeaderType(from),
	}
	if p.Opcode().HasImmediate() {
		wc.ImmData = p.ImmDt().ImmediateData()
		wc.WCFlags |= cq.WCFlagWithImm
	}
	r.messageDone()
	r.complete(&wc, p.BTH().SolicitedEvent())
}

// A RoCE packet carries no SL. In its place a UD receive's completion tells which network header
// the datagram came with, which the RoCEv2 annex (A17.4.5.1) has the completion report and
// libibverbs has no field of its own for: in sl, as ConnectX NICs report it, bit 3 for a RoCEv2
// (UDP) frame and the low three bits 1 for IPv6, 2 for IPv4. UCX's UD transport reads them to
// find the destination address in the receive buffer's network header, and without them drops
// every IPv4 datagram. Kernel rxe reports 0.
const (
	slRoCEv2 = 0x8
	slIPv6   = 0x1
	slIPv4   = 0x2
)

// networkHeaderType is the SL of a UD receive's completion for a datagram that arrived on from.
func networkHeaderType(from *packet.Envelope) uint8 {
	if from.Src.Addr().Unmap().Is4() {
		return slRoCEv2 | slIPv4
	}
	return slRoCEv2 | slIPv6
}

// putNetworkHeader writes the network header of a datagram of pktLen bytes (BTH to ICRC) that
// arrived on from into dst, as rxe lays it out: for IPv4, 20 zero bytes and the IPv4 header; for
// IPv6, the IPv6 header. A UDP socket does not reveal the IPv4 Identification, so it reads 0, the
// value gorxe's own senders use.
func putNetworkHeader(dst *[packet.GRHSize]byte, from *packet.Envelope, pktLen int) {
	env := asSent(*from)
	var buf [packet.IPv6HeaderSize + packet.UDPHeaderSize]byte
	b, err := env.AppendHeaders(buf[:0], pktLen)
	if err != nil {
		return // addresses of a received packet are always valid
	}
	if len(b) == packet.IPv4HeaderSize+packet.UDPHeaderSize {
		copy(dst[packet.GRHSize-packet.IPv4HeaderSize:], b[:packet.IPv4HeaderSize])
	} else {
		copy(dst[:], b[:packet.IPv6HeaderSize])
	}
}
