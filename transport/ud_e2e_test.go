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

// udPair returns two UD QPs in RTS on two devices and an AH on a's device that reaches b.
func udPair(t *testing.T, h *harness, qkeyB uint32) (a, b *hEndpoint, ah *qp.AH) {
	da, db := h.device("10.0.0.1"), h.device("10.0.0.2")
	a = da.createQP(hQPOptions{typ: qp.TypeUD, qkey: 0x22222222})
	b = db.createQP(hQPOptions{typ: qp.TypeUD, qkey: qkeyB})
	a.activateUD()
	b.activateUD()
	ah, err := da.qps.CreateAH(da.pd, &qp.AddressVector{IsGlobal: true, PortNum: 1,
		GRH: qp.GlobalRoute{DGID: hAV16(db.addr), HopLimit: 17, TrafficClass: 0x20, SGIDIndex: 1}})
	require.NoError(t, err)
	return a, b, ah
}

func TestRequesterUD(t *testing.T) {
	h := newHarness(t)
	h.keep = true
	a, b, ah := udPair(t, h, 0x33333333)
	src := a.d.region(4096, 0)
	copy(src.buf, hPattern(4096, 5))
	recv := b.d.region(4096+packet.GRHSize, 0)
	b.postRecv(1, recv.sge(0, len(recv.buf)))
	b.postRecv(2, recv.sge(0, len(recv.buf)))

	// The WR's Q_Key, then (high bit set) the sender QP's own, which the receiver rejects.
	a.post(
		qp.SendWR{ID: 10, Opcode: qp.WRSendWithImm, Flags: qp.SendSignaled | qp.SendSolicited, ImmData: 0xCAFE,
			SGList: []mr.SGE{src.sge(0, 1000), src.sge(2000, 2000)},
			UD:     qp.UDInfo{AH: ah, RemoteQPN: b.q.QPN(), RemoteQKey: 0x33333333}},
		qp.SendWR{ID: 11, Opcode: qp.WRSend, Flags: qp.SendSignaled, SGList: []mr.SGE{src.sge(0, 8)},
			UD: qp.UDInfo{AH: ah, RemoteQPN: b.q.QPN(), RemoteQKey: 0x80000000}},
	)
	h.settle(time.Second)
	wcs := a.pollSend()
	require.Len(t, wcs, 2, "send completions")
	wantWC(t, wcs[0], 10, cq.WCSuccess, cq.OpcodeSend)
	wantWC(t, wcs[1], 11, cq.WCSuccess, cq.OpcodeSend)
	rw := b.pollRecv()
	require.Len(t, rw, 1, "receive completions")
	require.Equal(t, uint64(1), rw[0].WRID, "receive wr_id")
	require.Equal(t, uint32(3000+40), rw[0].ByteLen, "receive byte_len")
	require.Equal(t, a.q.QPN(), rw[0].SrcQP, "receive source QPN")
	require.Equal(t, uint32(0xCAFE), rw[0].ImmData, "receive imm_data")
	want := append(append([]byte(nil), src.buf[:1000]...), src.buf[2000:4000]...)
	require.Equal(t, want, recv.buf[40:3040], "UD payload differs")
	require.Equal(t, uint64(1), b.d.count(counter.QKeyViolation), "receiver Q_Key drops")

	require.Len(t, h.trace, 2, "packets sent")
	for i, p := range h.trace {
		var pp packet.Parsed
		require.NoError(t, packet.Parse(p.buf, &pp))
		bth, deth := pp.BTH(), pp.DETH()
		wantOp := []packet.Opcode{packet.UDSendOnlyWithImmediate, packet.UDSendOnly}[i]
		wantQKey := []uint32{0x33333333, 0x22222222}[i]
		require.Equal(t, wantOp, pp.Opcode(), "packet %d opcode", i)
		require.Equal(t, b.q.QPN(), bth.DestQP(), "packet %d destination QPN", i)
		require.False(t, bth.AckReq(), "packet %d AckReq", i)
		require.Equal(t, uint16(0xFFFF), bth.PKey(), "packet %d P_Key", i)
		require.Equal(t, wantQKey, deth.QKey(), "packet %d Q_Key", i)
		require.Equal(t, a.q.QPN(), deth.SrcQP(), "packet %d source QPN", i)
		require.Equal(t, i == 0, bth.SolicitedEvent(), "packet %d SE", i)
		require.Equal(t, packet.PSN(i), bth.PSN(), "packet %d PSN", i)
		require.Equal(t, packet.DefaultUDPSourcePort(a.q.QPN()), p.path.Src.Port(), "packet %d UDP source port", i)
		require.Equal(t, uint8(17), p.path.HopLimit, "packet %d hop limit", i)
		require.Equal(t, uint8(0x20), p.path.TrafficClass, "packet %d traffic class", i)
	}
}

func TestRequesterUC(t *testing.T) {
	x := newE2E(t, hQPOptions{typ: qp.TypeUC, mtu: qp.MTU512})
	x.h.keep = true
	recv := x.b.d.region(5000, 0)
	x.b.postRecv(1, recv.sge(0, 5000))
	wc := x.one(qp.SendWR{ID: 1, Opcode: qp.WRSend, SGList: []mr.SGE{x.aBuf.sge(0, 3000)}})
	wantWC(t, wc, 1, cq.WCSuccess, cq.OpcodeSend)
	require.Equal(t, x.aBuf.buf[:3000], recv.buf[:3000], "UC send data differs")
	wc = x.one(qp.SendWR{ID: 2, Opcode: qp.WRRDMAWrite, SGList: []mr.SGE{x.aBuf.sge(0, 2000)},
		RDMA: qp.RDMAInfo{RemoteAddr: x.bBuf.mr.IOVA(), RKey: x.bBuf.mr.RKey()}})
	wantWC(t, wc, 2, cq.WCSuccess, cq.OpcodeRDMAWrite)
	require.Equal(t, x.aBuf.buf[:2000], x.bBuf.buf[:2000], "UC write data differs")
	for _, p := range x.h.trace {
		var pp packet.Parsed
		require.NoError(t, packet.Parse(p.buf, &pp))
		require.Equal(t, packet.TransportUC, pp.Opcode().Transport(), "opcode %#x", pp.Opcode())
		require.False(t, pp.BTH().AckReq(), "UC packet, opcode %#x, with AckReq", pp.Opcode())
	}
	require.Len(t, x.h.trace, 6+4, "packets")
}

// TestRequesterUCLongMessage sends a UC message longer than one call's packet budget.
func TestRequesterUCLongMessage(t *testing.T) {
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
