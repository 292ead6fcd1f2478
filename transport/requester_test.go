package transport

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

func TestHarnessRCSend(t *testing.T) {
	h := newHarness(t)
	a, b := h.pair(hQPOptions{})
	src := a.d.region(5000, 0)
	copy(src.buf, hPattern(5000, 1))
	dst := b.d.region(5000, 0)
	b.postRecv(7, dst.sge(0, 5000))
	a.post(qp.SendWR{ID: 1, Opcode: qp.WRSend, Flags: qp.SendSignaled, SGList: []mr.SGE{src.sge(0, 5000)}})
	h.settle(time.Second)
	wcs := a.pollSend()
	if len(wcs) != 1 {
		t.Fatalf("send WCs %v", wcs)
	}
	wantWC(t, wcs[0], 1, cq.WCSuccess, cq.OpcodeSend)
	rw := b.pollRecv()
	if len(rw) != 1 || rw[0].ByteLen != 5000 {
		t.Fatalf("recv WCs %+v", rw)
	}
	if !bytes.Equal(dst.buf, src.buf) {
		t.Fatal("data differs")
	}
}

// wantPkt is the expected shape of one request packet.
type wantPkt struct {
	op     packet.Opcode
	psn    packet.PSN
	n      int
	ackReq bool
	se     bool
}

func checkSent(t *testing.T, pr *probe, want []wantPkt) {
	t.Helper()
	if len(pr.sent) != len(want) {
		t.Fatalf("%d packets sent, want %d", len(pr.sent), len(want))
	}
	for i, w := range want {
		s := pr.sent[i]
		b := &s.h.BTH
		if b.Opcode != w.op || b.PSN != w.psn || s.n != w.n || b.AckReq != w.ackReq || b.SolicitedEvent != w.se {
			t.Errorf("packet %d: %v psn %#x len %d ackreq %v se %v; want %v psn %#x len %d ackreq %v se %v",
				i, b.Opcode, uint32(b.PSN), s.n, b.AckReq, b.SolicitedEvent, w.op, uint32(w.psn), w.n, w.ackReq, w.se)
		}
		if b.PKey != 0xFFFF || b.MigReq || b.DestQP != pr.b.q.QPN() || b.PadCount != uint8(-w.n&3) {
			t.Errorf("packet %d: pkey %#x migreq %v dqpn %#x pad %d", i, b.PKey, b.MigReq, b.DestQP, b.PadCount)
		}
	}
}

func TestRequesterSendSegmentation(t *testing.T) {
	pr := newProbe(t, hQPOptions{sqPSN: 0x100})
	src := pr.a.d.region(4096, 0)
	pr.a.post(
		qp.SendWR{ID: 1, Opcode: qp.WRSendWithImm, Flags: qp.SendSolicited, ImmData: 7, SGList: []mr.SGE{src.sge(0, 1000), src.sge(1000, 2001)}},
		qp.SendWR{ID: 2, Opcode: qp.WRSend, SGList: []mr.SGE{src.sge(0, 1024)}},
		qp.SendWR{ID: 3, Opcode: qp.WRSend},
		qp.SendWR{ID: 4, Opcode: qp.WRSendWithInv, InvalidateRKey: 0xABCD, Flags: qp.SendInline, InlineData: []byte("hello")},
	)
	pr.idle()
	checkSent(t, pr, []wantPkt{
		{packet.RCSendFirst, 0x100, 1024, false, false},
		{packet.RCSendMiddle, 0x101, 1024, false, false},
		{packet.RCSendLastWithImmediate, 0x102, 953, true, true},
		{packet.RCSendOnly, 0x103, 1024, true, false},
		{packet.RCSendOnly, 0x104, 0, true, false},
		{packet.RCSendOnlyWithInvalidate, 0x105, 5, true, false},
	})
	if pr.sent[2].h.ImmDt.ImmediateData != 7 || pr.sent[5].h.IETH.RKey != 0xABCD {
		t.Fatalf("imm %#x ieth %#x", pr.sent[2].h.ImmDt.ImmediateData, pr.sent[5].h.IETH.RKey)
	}
	var p packet.Parsed
	require.NoError(t, packet.Parse(pr.sent[0].raw, &p))
	if !bytes.Equal(p.Payload(), src.buf[:1024]) {
		t.Fatal("first packet payload differs")
	}
	require.NoError(t, packet.Parse(pr.sent[5].raw, &p))
	if string(p.Payload()) != "hello" {
		t.Fatalf("inline payload %q", p.Payload())
	}
}

func TestRequesterRDMAHeaders(t *testing.T) {
	pr := newProbe(t, hQPOptions{sqPSN: 0x200, mtu: qp.MTU1024})
	src := pr.a.d.region(8192, 0)
	rdma := qp.RDMAInfo{RemoteAddr: 0x1234_5678_9000, RKey: 0x4455}
	pr.a.post(
		qp.SendWR{ID: 1, Opcode: qp.WRRDMAWrite, SGList: []mr.SGE{src.sge(0, 2500)}, RDMA: rdma, Flags: qp.SendSolicited},
		qp.SendWR{ID: 2, Opcode: qp.WRRDMAWriteWithImm, SGList: []mr.SGE{src.sge(0, 10)}, RDMA: rdma, ImmData: 9, Flags: qp.SendSolicited},
		qp.SendWR{ID: 3, Opcode: qp.WRRDMARead, SGList: []mr.SGE{src.sge(0, 5000)}, RDMA: rdma},
		qp.SendWR{ID: 4, Opcode: qp.WRAtomicCmpAndSwp, SGList: []mr.SGE{src.sge(0, 8)},
			Atomic: qp.AtomicInfo{RemoteAddr: 0x1000, RKey: 0x77, CompareAdd: 5, Swap: 6}},
		qp.SendWR{ID: 5, Opcode: qp.WRAtomicFetchAndAdd, SGList: []mr.SGE{src.sge(0, 8)},
			Atomic: qp.AtomicInfo{RemoteAddr: 0x1008, RKey: 0x77, CompareAdd: 3}},
		qp.SendWR{ID: 6, Opcode: qp.WRAtomicWrite, RDMA: qp.RDMAInfo{RemoteAddr: 0x2000, RKey: 0x88}, AtomicWrite: [8]byte{9, 8, 7, 6, 5, 4, 3, 2}},
		qp.SendWR{ID: 7, Opcode: qp.WRFlush, RDMA: qp.RDMAInfo{RemoteAddr: 0x3000, RKey: 0x99},
			Flush: qp.FlushInfo{Length: 4096, Type: qp.FlushPersistent, Level: mr.FlushMR}},
		qp.SendWR{ID: 8, Opcode: qp.WRRDMARead, SGList: nil, RDMA: rdma},
	)
	pr.idle()
	checkSent(t, pr, []wantPkt{
		{packet.RCRDMAWriteFirst, 0x200, 1024, false, false},
		{packet.RCRDMAWriteMiddle, 0x201, 1024, false, false},
		{packet.RCRDMAWriteLast, 0x202, 452, true, false}, // SE only for WRITE with immediate
		{packet.RCRDMAWriteOnlyWithImmediate, 0x203, 10, true, true},
		{packet.RCRDMAReadRequest, 0x204, 0, true, false}, // takes 5 PSNs
		{packet.RCCompareSwap, 0x209, 0, true, false},
		{packet.RCFetchAdd, 0x20a, 0, true, false},
		{packet.RCAtomicWrite, 0x20b, 8, true, false},
		{packet.RCFlush, 0x20c, 0, true, false},
		{packet.RCRDMAReadRequest, 0x20d, 0, true, false}, // zero length still takes one PSN
	})
	wantRETH := func(i int, r packet.RETHFields) {
		t.Helper()
		if pr.sent[i].h.RETH != r {
			t.Errorf("packet %d RETH %+v, want %+v", i, pr.sent[i].h.RETH, r)
		}
	}
	wantRETH(0, packet.RETHFields{VirtualAddress: rdma.RemoteAddr, RKey: rdma.RKey, DMALength: 2500})
	wantRETH(3, packet.RETHFields{VirtualAddress: rdma.RemoteAddr, RKey: rdma.RKey, DMALength: 10})
	wantRETH(4, packet.RETHFields{VirtualAddress: rdma.RemoteAddr, RKey: rdma.RKey, DMALength: 5000})
	wantRETH(7, packet.RETHFields{VirtualAddress: 0x2000, RKey: 0x88, DMALength: 8})
	wantRETH(8, packet.RETHFields{VirtualAddress: 0x3000, RKey: 0x99, DMALength: 4096})
	wantRETH(9, packet.RETHFields{VirtualAddress: rdma.RemoteAddr, RKey: rdma.RKey, DMALength: 0})
	if got := pr.sent[3].h.ImmDt.ImmediateData; got != 9 {
		t.Errorf("imm %d", got)
	}
	if got := pr.sent[5].h.AtomicETH; got != (packet.AtomicETHFields{VirtualAddress: 0x1000, RKey: 0x77, SwapAddData: 6, CompareData: 5}) {
		t.Errorf("cmp-swap AtomicETH %+v", got)
	}
	if got := pr.sent[6].h.AtomicETH; got != (packet.AtomicETHFields{VirtualAddress: 0x1008, RKey: 0x77, SwapAddData: 3}) {
		t.Errorf("fetch-add AtomicETH %+v", got)
	}
	if got := pr.sent[8].h.FETH; got != (packet.FETHFields{PlacementType: packet.FlushPersistence, Selectivity: packet.FlushMemoryRegion}) {
		t.Errorf("FETH %+v", got)
	}
	var p packet.Parsed
	require.NoError(t, packet.Parse(pr.sent[7].raw, &p))
	if !bytes.Equal(p.Payload(), []byte{9, 8, 7, 6, 5, 4, 3, 2}) {
		t.Errorf("atomic write payload %x", p.Payload())
	}
}

// TestRequesterPath checks the framing: addresses from the AV and the GID table, rxe's UDP source
// port for the QP pair, hop limit and traffic class.
func TestRequesterPath(t *testing.T) {
	pr := newProbe(t, hQPOptions{})
	pr.a.post(qp.SendWR{Opcode: qp.WRSend})
	pr.idle()
	if len(pr.h.trace) != 0 || len(pr.sent) != 1 {
		t.Fatalf("%d packets", len(pr.sent))
	}
	h := newHarness(t)
	h.keep = true
	a, b := h.pair(hQPOptions{})
	a.post(qp.SendWR{Opcode: qp.WRSend})
	for h.step() {
	}
	p := h.trace[0].path
	wantSrc := netipAP(a.d.addr, packet.UDPSourcePort(0, a.q.QPN(), b.q.QPN()))
	if p.Src != wantSrc || p.Dst != netipAP(b.d.addr, 4791) || p.HopLimit != 64 {
		t.Fatalf("path %+v, want src %v", p, wantSrc)
	}
}

// TestRequesterAckReqAndWindow checks that a long RC message asks for an ACK every 64 packets and
// that the requester stops 128 PSNs ahead of the oldest unacknowledged one.
func TestRequesterAckReqAndWindow(t *testing.T) {
	pr := newProbe(t, hQPOptions{mtu: qp.MTU256, sqPSN: 0xFFFFC0})
	src := pr.a.d.region(300*256, 0)
	pr.a.post(qp.SendWR{ID: 1, Opcode: qp.WRRDMAWrite, Flags: qp.SendSignaled, SGList: []mr.SGE{src.sge(0, 300*256)}, RDMA: qp.RDMAInfo{RemoteAddr: 0, RKey: 1}})
	pr.idle()
	if len(pr.sent) != 128 {
		t.Fatalf("%d packets before any ACK, want 128", len(pr.sent))
	}
	first := packet.PSN(0xFFFFC0)
	for i, s := range pr.sent {
		if s.h.BTH.PSN != first.Add(uint32(i)) {
			t.Fatalf("packet %d PSN %#x", i, uint32(s.h.BTH.PSN))
		}
		if want := i == 63 || i == 127; s.h.BTH.AckReq != want {
			t.Fatalf("packet %d AckReq %v", i, s.h.BTH.AckReq)
		}
	}
	// Acknowledging the first 64 opens the window by 64.
	pr.respond(pr.ackHeaders(first.Add(63), packet.SyndromeACKUnlimited), nil)
	if len(pr.sent) != 192 {
		t.Fatalf("%d packets after the first ACK, want 192", len(pr.sent))
	}
	pr.respond(pr.ackHeaders(first.Add(191), packet.SyndromeACKUnlimited), nil)
	if len(pr.sent) != 300 || !pr.sent[299].h.BTH.AckReq || pr.sent[299].h.BTH.Opcode != packet.RCRDMAWriteLast {
		t.Fatalf("%d packets, last %v", len(pr.sent), pr.sent[len(pr.sent)-1].h.BTH.Opcode)
	}
	pr.respond(pr.ackHeaders(first.Add(299), packet.SyndromeACKUnlimited), nil)
	wcs := pr.a.pollSend()
	if len(wcs) != 1 || wcs[0].Status != cq.WCSuccess {
		t.Fatalf("completions %+v", wcs)
	}
	if !pr.a.e.Deadline().IsZero() {
		t.Fatal("retransmit timer still armed with nothing outstanding")
	}
}

// TestRequesterHalfPSNSpaceRead: a 2 GiB READ at MTU 256 takes 2^23 PSNs, half the PSN space.
// Nothing may follow it until responses come back: with 2^23 PSNs outstanding, one more would make
// the oldest and the newest indistinguishable in serial-number order, to the completer as to the
// responder (IBTA lets at most 2^23 PSNs be outstanding).
func TestRequesterHalfPSNSpaceRead(t *testing.T) {
	pr := newProbe(t, hQPOptions{mtu: qp.MTU256, sqPSN: 0xFFFFF0})
	// 512 pages of 4 MiB, all the same memory: a 2 GiB region that costs 4 MiB.
	const pageSize, pages = 4 << 20, 512
	mem := pr.a.d.mem
	fr, err := mem.AllocMR(pr.a.d.pd, pages)
	require.NoError(t, err)
	page := make([]byte, pageSize)
	list := make([][]byte, pages)
	for i := range list {
		list[i] = page
	}
	key := mr.IncKey(fr.LKey())
	require.NoError(t, mem.RegFast(pr.a.d.pd, &mr.FastReg{Key: key, Access: mr.AccessLocalWrite, IOVA: 0, Length: 1 << 31,
		PageSize: pageSize, Pages: list}))
	pr.a.post(qp.SendWR{ID: 1, Opcode: qp.WRSend},
		qp.SendWR{ID: 2, Opcode: qp.WRRDMARead, SGList: []mr.SGE{{Addr: 0, Length: 1 << 31, LKey: key}}, RDMA: qp.RDMAInfo{RKey: 1}},
		qp.SendWR{ID: 3, Opcode: qp.WRSend})
	pr.idle()
	// The READ waits until the SEND before it is acknowledged.
	if len(pr.sent) != 1 || pr.sent[0].h.BTH.Opcode != packet.RCSendOnly {
		t.Fatalf("%d packets sent while the SEND is unacknowledged (last %v)", len(pr.sent), pr.sent[len(pr.sent)-1].h.BTH.Opcode)
	}
	pr.respond(pr.ackHeaders(0xFFFFF0, packet.SyndromeACKUnlimited), nil)
	if len(pr.sent) != 2 || pr.sent[1].h.BTH.Opcode != packet.RCRDMAReadRequest || pr.sent[1].h.BTH.PSN != 0xFFFFF1 {
		t.Fatalf("%d packets sent behind a READ of 2^23 PSNs (last %v)", len(pr.sent), pr.sent[len(pr.sent)-1].h.BTH.Opcode)
	}
}

// TestRequesterInitiatorDepthAndFence checks max_rd_atomic and the fence.
func TestRequesterInitiatorDepthAndFence(t *testing.T) {
	pr := newProbe(t, hQPOptions{maxRdAtomic: 2, sqPSN: 10})
	buf := pr.a.d.region(64, 0)
	read := func(id uint64) qp.SendWR {
		return qp.SendWR{ID: id, Opcode: qp.WRRDMARead, SGList: []mr.SGE{buf.sge(0, 4)}, RDMA: qp.RDMAInfo{RKey: 1}}
	}
	pr.a.post(read(1), read(2), read(3),
		qp.SendWR{ID: 4, Opcode: qp.WRSend, Flags: qp.SendFence}, qp.SendWR{ID: 5, Opcode: qp.WRSend})
	pr.idle()
	if len(pr.sent) != 2 {
		t.Fatalf("%d packets with max_rd_atomic 2, want 2", len(pr.sent))
	}
	resp := func(psn packet.PSN) {
		pr.msn++
		pr.respond(&packet.Headers{BTH: packet.BTHFields{Opcode: packet.RCRDMAReadResponseOnly, PSN: psn},
			AETH: packet.AETHFields{Syndrome: packet.SyndromeACKUnlimited, MSN: pr.msn}}, []byte{1, 2, 3, 4})
	}
	resp(10)
	if len(pr.sent) != 3 || pr.sent[2].h.BTH.Opcode != packet.RCRDMAReadRequest || pr.sent[2].h.BTH.PSN != 12 {
		t.Fatalf("after one response: %d packets", len(pr.sent))
	}
	resp(11)
	// READ 3 is still outstanding: the fenced SEND waits, and the SEND after it with it.
	if len(pr.sent) != 3 {
		t.Fatalf("fenced send went out early (%d packets)", len(pr.sent))
	}
	resp(12)
	checkSent(t, pr, []wantPkt{
		{packet.RCRDMAReadRequest, 10, 0, true, false},
		{packet.RCRDMAReadRequest, 11, 0, true, false},
		{packet.RCRDMAReadRequest, 12, 0, true, false},
		{packet.RCSendOnly, 13, 0, true, false},
		{packet.RCSendOnly, 14, 0, true, false},
	})
	if got := pr.a.pollSend(); len(got) != 0 {
		t.Fatalf("unsignaled completions %+v", got)
	}
}

// TestRequesterPSNWrap sends across the 2^24 PSN wrap end to end.
func TestRequesterPSNWrap(t *testing.T) {
	x := newE2E(t, hQPOptions{sqPSN: 0xFFFFFD, mtu: qp.MTU256})
	x.h.keep = true
	recv := x.b.d.region(4096, 0)
	x.b.postRecv(1, recv.sge(0, 4096))
	wc := x.one(qp.SendWR{ID: 1, Opcode: qp.WRSend, SGList: []mr.SGE{x.aBuf.sge(0, 2000)}})
	wantWC(t, wc, 1, cq.WCSuccess, cq.OpcodeSend)
	wc = x.one(qp.SendWR{ID: 2, Opcode: qp.WRRDMARead, SGList: []mr.SGE{x.aBuf.sge(10000, 3000)},
		RDMA: qp.RDMAInfo{RemoteAddr: x.bBuf.mr.IOVA(), RKey: x.bBuf.mr.RKey()}})
	wantWC(t, wc, 2, cq.WCSuccess, cq.OpcodeRDMARead)
	if !bytes.Equal(recv.buf[:2000], x.aBuf.buf[:2000]) || !bytes.Equal(x.aBuf.buf[10000:13000], x.bBuf.buf[:3000]) {
		t.Fatal("data differs across the PSN wrap")
	}
	var psns []uint32
	for _, p := range x.h.trace {
		var pp packet.Parsed
		require.NoError(t, packet.Parse(p.buf, &pp))
		if p.path.Src.Addr() == x.a.d.addr {
			psns = append(psns, uint32(pp.BTH().PSN()))
		}
	}
	// Eight SEND packets, then the READ request, which takes PSNs 5 to 16.
	want := []uint32{0xFFFFFD, 0xFFFFFE, 0xFFFFFF, 0, 1, 2, 3, 4, 5}
	if !equalU32(psns, want) {
		t.Fatalf("request PSNs %#x", psns)
	}
}

func equalU32(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
