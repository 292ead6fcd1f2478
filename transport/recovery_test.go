package transport

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

// requestPSNs returns the PSNs of the request packets a emitted, in order.
func requestPSNs(t *testing.T, h *harness, a *hEndpoint) []uint32 {
	var psns []uint32
	for _, p := range h.trace {
		var pp packet.Parsed
		require.NoError(t, packet.Parse(p.buf, &pp))
		if p.path.Src.Addr() == a.d.addr && pp.Opcode().IsRequest() {
			psns = append(psns, uint32(pp.BTH().PSN()))
		}
	}
	return psns
}

// dropOnce returns a tap that drops the first request packet from a with PSN psn.
func dropOnce(a *hEndpoint, psn packet.PSN) func(*hPacket, *packet.Parsed) bool {
	dropped := false
	return func(p *hPacket, pp *packet.Parsed) bool {
		if !dropped && p.path.Src.Addr() == a.d.addr && pp.Opcode().IsRequest() && pp.BTH().PSN() == psn {
			dropped = true
			return false
		}
		return true
	}
}

// TestGoBackNAfterLoss loses one packet of a long SEND: the responder's sequence NAK makes the
// requester resend from the lost PSN on, without a timeout, and the data arrives intact.
func TestGoBackNAfterLoss(t *testing.T) {
	x := newE2E(t, hQPOptions{mtu: qp.MTU1024, sqPSN: 0xFFFFFE})
	x.h.keep = true
	x.h.tap = dropOnce(x.a, 1)
	recv := x.b.d.region(10240, 0)
	x.b.postRecv(1, recv.sge(0, 10240))
	wc := x.one(qp.SendWR{ID: 1, Opcode: qp.WRSend, SGList: []mr.SGE{x.aBuf.sge(0, 10*1024)}})
	wantWC(t, wc, 1, cq.WCSuccess, cq.OpcodeSend)
	require.True(t, bytes.Equal(recv.buf, x.aBuf.buf[:10240]), "data differs")
	// PSN 1 is lost (the trace holds what the network carried); the responder NAKs at PSN 2.
	want := []uint32{0xFFFFFE, 0xFFFFFF, 0, 2, 3, 4, 5, 6, 7, 1, 2, 3, 4, 5, 6, 7}
	require.Equal(t, want, requestPSNs(t, x.h, x.a), "request PSNs")
	require.Equal(t, hStart, x.h.now, "recovery waited for a timeout")
	require.Equal(t, uint64(1), x.a.d.count(counter.RcvdSeqErr), "seq errors")
	require.Equal(t, uint64(1), x.a.d.count(counter.CompleterRetryErr), "retries")
}

// TestGoBackNLastPacketLost loses the last packet of a message, which nothing follows: only the
// retransmit timer recovers, one timeout later. The timer resends the oldest packet alone (asking
// for an ACK); the responder, which has it, acknowledges up to the gap, and only the lost packet
// follows.
func TestGoBackNLastPacketLost(t *testing.T) {
	x := newE2E(t, hQPOptions{mtu: qp.MTU1024, timeout: 12})
	x.h.keep = true
	x.h.tap = dropOnce(x.a, 2)
	x.b.postRecv(1, x.b.d.region(4096, 0).sge(0, 4096))
	wc := x.one(qp.SendWR{ID: 1, Opcode: qp.WRSend, SGList: []mr.SGE{x.aBuf.sge(0, 3000)}})
	wantWC(t, wc, 1, cq.WCSuccess, cq.OpcodeSend)
	// PSN 2, the only one asking for an ACK, is lost (the trace holds what the network carried).
	require.Equal(t, []uint32{0, 1, 0, 2}, requestPSNs(t, x.h, x.a), "request PSNs")
	require.Equal(t, ackTimeout(12), x.h.now.Sub(hStart), "recovery after one timeout")
}

// TestReadResponseLossRestart loses a READ response in the middle: the READ is re-requested from
// the first missing response.
func TestReadResponseLossRestart(t *testing.T) {
	x := newE2E(t, hQPOptions{mtu: qp.MTU1024, sqPSN: 100})
	x.h.keep = true
	dropped := false
	x.h.tap = func(p *hPacket, pp *packet.Parsed) bool {
		if !dropped && pp.Opcode() == packet.RCRDMAReadResponseMiddle && pp.BTH().PSN() == 102 {
			dropped = true
			return false
		}
		return true
	}
	wc := x.one(qp.SendWR{ID: 1, Opcode: qp.WRRDMARead, SGList: []mr.SGE{x.aBuf.sge(0, 6000)},
		RDMA: qp.RDMAInfo{RemoteAddr: x.bBuf.mr.IOVA() + 5, RKey: x.bBuf.mr.RKey()}})
	wantWC(t, wc, 1, cq.WCSuccess, cq.OpcodeRDMARead)
	require.True(t, bytes.Equal(x.aBuf.buf[:6000], x.bBuf.buf[5:6005]), "READ data differs")
	var reqs []packet.RETHFields
	for _, p := range x.h.trace {
		var pp packet.Parsed
		require.NoError(t, packet.Parse(p.buf, &pp))
		if pp.Opcode() == packet.RCRDMAReadRequest {
			reqs = append(reqs, pp.RETH().Fields())
		}
	}
	va := x.bBuf.mr.IOVA() + 5
	require.Len(t, reqs, 2, "READ requests")
	require.Equal(t, va+2048, reqs[1].VirtualAddress, "re-request VA")
	require.Equal(t, uint32(6000-2048), reqs[1].DMALength, "re-request length")
}

// TestUCLongMessage sends a UC message longer than one call's packet budget.
func TestUCLongMessage(t *testing.T) {
	x := newE2E(t, hQPOptions{typ: qp.TypeUC, mtu: qp.MTU256})
	n := 300 * 256
	big := x.a.d.region(n, 0)
	copy(big.buf, hPattern(n, 8))
	target := x.b.d.region(n, 0)
	wc := x.one(qp.SendWR{ID: 1, Opcode: qp.WRRDMAWrite, SGList: []mr.SGE{big.sge(0, n)},
		RDMA: qp.RDMAInfo{RemoteAddr: target.mr.IOVA(), RKey: target.mr.RKey()}})
	wantWC(t, wc, 1, cq.WCSuccess, cq.OpcodeRDMAWrite)
	require.True(t, bytes.Equal(target.buf, big.buf), "UC write differs")
}

// TestReconnectAfterError brings a QP that failed back through RESET to RTS with a new sq_psn and
// sends again.
func TestReconnectAfterError(t *testing.T) {
	x := newE2E(t, hQPOptions{})
	wc := x.one(qp.SendWR{ID: 1, Opcode: qp.WRRDMAWrite, SGList: []mr.SGE{x.aBuf.sge(0, 8)}, RDMA: qp.RDMAInfo{RKey: 0xBAD}})
	wantWC(t, wc, 1, cq.WCRemAccessErr, 0)
	for _, ep := range []*hEndpoint{x.a, x.b} {
		require.NoError(t, ep.q.Modify(&qp.Attr{State: qp.StateReset}, qp.AttrState))
	}
	x.a.o.sqPSN, x.b.o.sqPSN = 0x500, 0x900
	x.a.connect(x.b)
	x.b.connect(x.a)
	x.b.postRecv(2, x.b.d.region(64, 0).sge(0, 64))
	wc = x.one(qp.SendWR{ID: 2, Opcode: qp.WRSend, SGList: []mr.SGE{x.aBuf.sge(0, 10)}})
	wantWC(t, wc, 2, cq.WCSuccess, cq.OpcodeSend)
	require.Equal(t, packet.PSN(0x501), x.a.e.req.psn, "next PSN")
}

// TestSendCQOverflow: a completion that finds the send CQ full moves the QP to ERR.
func TestSendCQOverflow(t *testing.T) {
	x := newE2E(t, hQPOptions{cqDepth: 2})
	for i := range 3 {
		x.b.postRecv(uint64(i), x.b.d.region(64, 0).sge(0, 64))
	}
	x.a.post(qp.SendWR{ID: 1, Opcode: qp.WRSend, Flags: qp.SendSignaled}, qp.SendWR{ID: 2, Opcode: qp.WRSend, Flags: qp.SendSignaled},
		qp.SendWR{ID: 3, Opcode: qp.WRSend, Flags: qp.SendSignaled})
	x.h.settle(time.Minute)
	require.Equal(t, qp.StateErr, x.a.q.State())
	require.Error(t, x.a.scq.Err(), "CQ error")
}

// TestGSIQKey checks the GSI QP's Q_Key rule: the well-known Q_Key 0x80010000 in the work request
// has the high bit set and so stands for the QP's own Q_Key.
func TestGSIQKey(t *testing.T) {
	h, a, b, ah := gsiPair(t)
	buf := b.d.region(256+packet.GRHSize, 0)
	b.postRecv(1, buf.sge(0, len(buf.buf)))
	a.post(qp.SendWR{ID: 1, Opcode: qp.WRSend, Flags: qp.SendSignaled, SGList: []mr.SGE{a.d.region(256, 0).sge(0, 256)},
		UD: qp.UDInfo{AH: ah, RemoteQPN: 1, RemoteQKey: packet.GSIQKey, PKeyIndex: 0}})
	h.settle(time.Second)
	require.Equal(t, uint32(1), a.q.QPN(), "GSI QPN")
	require.Len(t, a.pollSend(), 1, "GSI datagram not delivered")
	require.Len(t, b.pollRecv(), 1, "GSI datagram not delivered")
	var pp packet.Parsed
	require.NoError(t, packet.Parse(h.trace[0].buf, &pp))
	require.Equal(t, uint32(packet.GSIQKey), pp.DETH().QKey(), "GSI packet Q_Key")
	require.Equal(t, uint32(1), pp.DETH().SrcQP(), "GSI packet source QP")
	require.Equal(t, uint32(1), pp.BTH().DestQP(), "GSI packet destination QP")
	require.Equal(t, uint16(0xFFFF), pp.BTH().PKey(), "GSI packet P_Key")
}

// TestReconnectThroughUnseenReset reconnects b to a fresh peer with the same PSNs through a RESET
// the engines never see (the whole RESET->RTS walk happens between two of their calls). b must
// start over at its new rq_psn and sq_psn, not carry on with the old connection's: otherwise it
// takes the new peer's first SEND for a duplicate, acknowledges it and drops the data.
func TestReconnectThroughUnseenReset(t *testing.T) {
	x := newE2E(t, hQPOptions{})
	x.b.postRecv(1, x.b.d.region(64, 0).sge(0, 64))
	wc := x.one(qp.SendWR{ID: 1, Opcode: qp.WRSend, SGList: []mr.SGE{x.aBuf.sge(0, 10)}})
	wantWC(t, wc, 1, cq.WCSuccess, cq.OpcodeSend)
	x.b.pollRecv()
	// b reconnects (unseen RESET) to a fresh QP c on a's device, same PSNs.
	c := x.a.d.createQP(hQPOptions{})
	require.NoError(t, x.b.q.Modify(&qp.Attr{State: qp.StateReset}, qp.AttrState))
	x.b.connect(c)
	c.connect(x.b)
	x.b.postRecv(2, x.b.d.region(64, 0).sge(0, 64))
	c.post(qp.SendWR{ID: 7, Opcode: qp.WRSend, Flags: qp.SendSignaled, SGList: []mr.SGE{c.d.region(64, 0).sge(0, 10)}})
	x.h.settle(10 * time.Second)
	wcs := x.b.pollRecv()
	require.Len(t, wcs, 1, "b recv")
	require.Equal(t, uint64(2), wcs[0].WRID, "b recv")
	wcs = c.pollSend()
	require.Len(t, wcs, 1, "c send")
	require.Equal(t, cq.WCSuccess, wcs[0].Status, "c send")
	// and b -> c
	c.postRecv(3, c.d.region(64, 0).sge(0, 64))
	x.b.post(qp.SendWR{ID: 8, Opcode: qp.WRSend, Flags: qp.SendSignaled, SGList: []mr.SGE{x.bBuf.sge(0, 10)}})
	x.h.settle(10 * time.Second)
	wcs = x.b.pollSend()
	require.Len(t, wcs, 1, "b send")
	require.Equal(t, cq.WCSuccess, wcs[0].Status, "b send")
}
