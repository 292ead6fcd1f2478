package transport

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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
	require.Len(t, wcs, 1, "send completions")
	wantWC(t, wcs[0], 1, cq.WCSuccess, cq.OpcodeSend)
	rw := b.pollRecv()
	require.Len(t, rw, 1, "receive completions")
	require.Equal(t, uint32(5000), rw[0].ByteLen, "receive byte_len")
	require.Equal(t, src.buf, dst.buf, "data differs")
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
	require.Len(t, pr.sent, len(want), "packets sent")
	for i, w := range want {
		s := pr.sent[i]
		b := &s.h.BTH
		assert.Equal(t, w, wantPkt{op: b.Opcode, psn: b.PSN, n: s.n, ackReq: b.AckReq, se: b.SolicitedEvent}, "packet %d", i)
		assert.Equal(t, uint16(0xFFFF), b.PKey, "packet %d P_Key", i)
		assert.False(t, b.MigReq, "packet %d MigReq", i)
		assert.Equal(t, pr.b.q.QPN(), b.DestQP, "packet %d destination QPN", i)
		assert.Equal(t, uint8(-w.n&3), b.PadCount, "packet %d pad count", i)
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
	require.Equal(t, uint32(7), pr.sent[2].h.ImmDt.ImmediateData, "immediate data")
	require.Equal(t, uint32(0xABCD), pr.sent[5].h.IETH.RKey, "IETH R_Key")
	var p packet.Parsed
	require.NoError(t, packet.Parse(pr.sent[0].raw, &p))
	require.Equal(t, src.buf[:1024], p.Payload(), "first packet payload differs")
	require.NoError(t, packet.Parse(pr.sent[5].raw, &p))
	require.Equal(t, "hello", string(p.Payload()), "inline payload")
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
		assert.Equal(t, r, pr.sent[i].h.RETH, "packet %d RETH", i)
	}
	wantRETH(0, packet.RETHFields{VirtualAddress: rdma.RemoteAddr, RKey: rdma.RKey, DMALength: 2500})
	wantRETH(3, packet.RETHFields{VirtualAddress: rdma.RemoteAddr, RKey: rdma.RKey, DMALength: 10})
	wantRETH(4, packet.RETHFields{VirtualAddress: rdma.RemoteAddr, RKey: rdma.RKey, DMALength: 5000})
	wantRETH(7, packet.RETHFields{VirtualAddress: 0x2000, RKey: 0x88, DMALength: 8})
	wantRETH(8, packet.RETHFields{VirtualAddress: 0x3000, RKey: 0x99, DMALength: 4096})
	wantRETH(9, packet.RETHFields{VirtualAddress: rdma.RemoteAddr, RKey: rdma.RKey, DMALength: 0})
	assert.Equal(t, uint32(9), pr.sent[3].h.ImmDt.ImmediateData, "immediate data")
	assert.Equal(t, packet.AtomicETHFields{VirtualAddress: 0x1000, RKey: 0x77, SwapAddData: 6, CompareData: 5},
		pr.sent[5].h.AtomicETH, "cmp-swap AtomicETH")
	assert.Equal(t, packet.AtomicETHFields{VirtualAddress: 0x1008, RKey: 0x77, SwapAddData: 3},
		pr.sent[6].h.AtomicETH, "fetch-add AtomicETH")
	assert.Equal(t, packet.FETHFields{PlacementType: packet.FlushPersistence, Selectivity: packet.FlushMemoryRegion},
		pr.sent[8].h.FETH, "FETH")
	var p packet.Parsed
	require.NoError(t, packet.Parse(pr.sent[7].raw, &p))
	assert.Equal(t, []byte{9, 8, 7, 6, 5, 4, 3, 2}, p.Payload(), "atomic write payload")
}

// TestRequesterPath checks the framing: addresses from the AV and the GID table, rxe's UDP source
// port for the QP pair, hop limit and traffic class.
func TestRequesterPath(t *testing.T) {
	pr := newProbe(t, hQPOptions{})
	pr.a.post(qp.SendWR{Opcode: qp.WRSend})
	pr.idle()
	require.Empty(t, pr.h.trace, "harness trace")
	require.Len(t, pr.sent, 1, "packets sent")
	h := newHarness(t)
	h.keep = true
	a, b := h.pair(hQPOptions{})
	a.post(qp.SendWR{Opcode: qp.WRSend})
	for h.step() {
	}
	p := h.trace[0].path
	wantSrc := netipAP(a.d.addr, packet.UDPSourcePort(0, a.q.QPN(), b.q.QPN()))
	require.Equal(t, wantSrc, p.Src, "source")
	require.Equal(t, netipAP(b.d.addr, 4791), p.Dst, "destination")
	require.Equal(t, uint8(64), p.HopLimit, "hop limit")
}

// TestRequesterAckReqAndWindow checks that a long RC message asks for an ACK every 64 packets and
// that the requester stops 128 PSNs ahead of the oldest unacknowledged one.
func TestRequesterAckReqAndWindow(t *testing.T) {
	pr := newProbe(t, hQPOptions{mtu: qp.MTU256, sqPSN: 0xFFFFC0})
	src := pr.a.d.region(300*256, 0)
	pr.a.post(qp.SendWR{ID: 1, Opcode: qp.WRRDMAWrite, Flags: qp.SendSignaled, SGList: []mr.SGE{src.sge(0, 300*256)}, RDMA: qp.RDMAInfo{RemoteAddr: 0, RKey: 1}})
	pr.idle()
	require.Len(t, pr.sent, 128, "packets before any ACK")
	first := packet.PSN(0xFFFFC0)
	for i, s := range pr.sent {
		require.Equal(t, first.Add(uint32(i)), s.h.BTH.PSN, "packet %d PSN", i)
		require.Equal(t, i == 63 || i == 127, s.h.BTH.AckReq, "packet %d AckReq", i)
	}
	// Acknowledging the first 64 opens the window by 64.
	pr.respond(pr.ackHeaders(first.Add(63), packet.SyndromeACKUnlimited), nil)
	require.Len(t, pr.sent, 192, "packets after the first ACK")
	pr.respond(pr.ackHeaders(first.Add(191), packet.SyndromeACKUnlimited), nil)
	require.Len(t, pr.sent, 300, "packets after the second ACK")
	require.True(t, pr.sent[299].h.BTH.AckReq, "last packet AckReq")
	require.Equal(t, packet.RCRDMAWriteLast, pr.sent[299].h.BTH.Opcode, "last packet opcode")
	pr.respond(pr.ackHeaders(first.Add(299), packet.SyndromeACKUnlimited), nil)
	wcs := pr.a.pollSend()
	require.Len(t, wcs, 1, "completions")
	require.Equal(t, cq.WCSuccess, wcs[0].Status, "completion status")
	require.True(t, pr.a.e.Deadline().IsZero(), "retransmit timer still armed with nothing outstanding")
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
	require.Len(t, pr.sent, 1, "packets sent while the SEND is unacknowledged")
	require.Equal(t, packet.RCSendOnly, pr.sent[0].h.BTH.Opcode, "first packet opcode")
	pr.respond(pr.ackHeaders(0xFFFFF0, packet.SyndromeACKUnlimited), nil)
	require.Len(t, pr.sent, 2, "packets sent behind a READ of 2^23 PSNs")
	require.Equal(t, packet.RCRDMAReadRequest, pr.sent[1].h.BTH.Opcode, "second packet opcode")
	require.Equal(t, packet.PSN(0xFFFFF1), pr.sent[1].h.BTH.PSN, "second packet PSN")
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
	require.Len(t, pr.sent, 2, "packets with max_rd_atomic 2")
	resp := func(psn packet.PSN) {
		pr.msn++
		pr.respond(&packet.Headers{BTH: packet.BTHFields{Opcode: packet.RCRDMAReadResponseOnly, PSN: psn},
			AETH: packet.AETHFields{Syndrome: packet.SyndromeACKUnlimited, MSN: pr.msn}}, []byte{1, 2, 3, 4})
	}
	resp(10)
	require.Len(t, pr.sent, 3, "packets after one response")
	require.Equal(t, packet.RCRDMAReadRequest, pr.sent[2].h.BTH.Opcode, "third packet opcode")
	require.Equal(t, packet.PSN(12), pr.sent[2].h.BTH.PSN, "third packet PSN")
	resp(11)
	// READ 3 is still outstanding: the fenced SEND waits, and the SEND after it with it.
	require.Len(t, pr.sent, 3, "fenced send went out early")
	resp(12)
	checkSent(t, pr, []wantPkt{
		{packet.RCRDMAReadRequest, 10, 0, true, false},
		{packet.RCRDMAReadRequest, 11, 0, true, false},
		{packet.RCRDMAReadRequest, 12, 0, true, false},
		{packet.RCSendOnly, 13, 0, true, false},
		{packet.RCSendOnly, 14, 0, true, false},
	})
	require.Empty(t, pr.a.pollSend(), "unsignaled completions")
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
	require.Equal(t, x.aBuf.buf[:2000], recv.buf[:2000], "SEND data differs across the PSN wrap")
	require.Equal(t, x.bBuf.buf[:3000], x.aBuf.buf[10000:13000], "READ data differs across the PSN wrap")
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
	require.Equal(t, want, psns, "request PSNs")
}
