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
	recv := b.d.region(4096+40, 0)
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
	if len(wcs) != 2 {
		t.Fatalf("send completions %+v", wcs)
	}
	wantWC(t, wcs[0], 10, cq.WCSuccess, cq.OpcodeSend)
	wantWC(t, wcs[1], 11, cq.WCSuccess, cq.OpcodeSend)
	rw := b.pollRecv()
	if len(rw) != 1 || rw[0].WRID != 1 || rw[0].ByteLen != 3000+40 || rw[0].SrcQP != a.q.QPN() || rw[0].ImmData != 0xCAFE {
		t.Fatalf("recv completions %+v", rw)
	}
	want := append(append([]byte(nil), src.buf[:1000]...), src.buf[2000:4000]...)
	if !bytes.Equal(recv.buf[40:3040], want) {
		t.Fatal("UD payload differs")
	}
	if b.d.count(counter.QKeyViolation) != 1 {
		t.Fatalf("receiver Q_Key drops %d, want 1", b.d.count(counter.QKeyViolation))
	}

	if len(h.trace) != 2 {
		t.Fatalf("%d packets sent, want 2", len(h.trace))
	}
	for i, p := range h.trace {
		var pp packet.Parsed
		require.NoError(t, packet.Parse(p.buf, &pp))
		bth, deth := pp.BTH(), pp.DETH()
		wantOp := []packet.Opcode{packet.UDSendOnlyWithImmediate, packet.UDSendOnly}[i]
		wantQKey := []uint32{0x33333333, 0x22222222}[i]
		if pp.Opcode() != wantOp || bth.DestQP() != b.q.QPN() || bth.AckReq() || bth.PKey() != 0xFFFF ||
			deth.QKey() != wantQKey || deth.SrcQP() != a.q.QPN() || bth.SolicitedEvent() != (i == 0) {
			t.Fatalf("packet %d: %v dqpn %#x ackreq %v pkey %#x qkey %#x srcqp %#x se %v", i, pp.Opcode(),
				bth.DestQP(), bth.AckReq(), bth.PKey(), deth.QKey(), deth.SrcQP(), bth.SolicitedEvent())
		}
		if bth.PSN() != packet.PSN(i) {
			t.Fatalf("packet %d PSN %d", i, bth.PSN())
		}
		if p.path.Src.Port() != packet.DefaultUDPSourcePort(a.q.QPN()) || p.path.HopLimit != 17 || p.path.TrafficClass != 0x20 {
			t.Fatalf("packet %d path %+v", i, p.path)
		}
	}
}

func TestRequesterUC(t *testing.T) {
	x := newE2E(t, hQPOptions{typ: qp.TypeUC, mtu: qp.MTU512})
	x.h.keep = true
	recv := x.b.d.region(5000, 0)
	x.b.postRecv(1, recv.sge(0, 5000))
	wc := x.one(qp.SendWR{ID: 1, Opcode: qp.WRSend, SGList: []mr.SGE{x.aBuf.sge(0, 3000)}})
	wantWC(t, wc, 1, cq.WCSuccess, cq.OpcodeSend)
	if !bytes.Equal(recv.buf[:3000], x.aBuf.buf[:3000]) {
		t.Fatal("UC send data differs")
	}
	wc = x.one(qp.SendWR{ID: 2, Opcode: qp.WRRDMAWrite, SGList: []mr.SGE{x.aBuf.sge(0, 2000)},
		RDMA: qp.RDMAInfo{RemoteAddr: x.bBuf.mr.IOVA(), RKey: x.bBuf.mr.RKey()}})
	wantWC(t, wc, 2, cq.WCSuccess, cq.OpcodeRDMAWrite)
	if !bytes.Equal(x.bBuf.buf[:2000], x.aBuf.buf[:2000]) {
		t.Fatal("UC write data differs")
	}
	for _, p := range x.h.trace {
		var pp packet.Parsed
		require.NoError(t, packet.Parse(p.buf, &pp))
		if pp.Opcode().Transport() != packet.TransportUC || pp.BTH().AckReq() {
			t.Fatalf("UC packet %v with AckReq %v", pp.Opcode(), pp.BTH().AckReq())
		}
	}
	if len(x.h.trace) != 6+4 {
		t.Fatalf("%d packets, want 10", len(x.h.trace))
	}
}
