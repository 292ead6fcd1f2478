package transport

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/qp"
)

// e2e is a connected RC (or UC) pair with a source and a target region on each side.
type e2e struct {
	h    *harness
	a, b *hEndpoint
	aBuf hRegion // requester-side memory
	bBuf hRegion // responder-side memory
}

const e2eSize = 64 << 10

func newE2E(t *testing.T, o hQPOptions) *e2e {
	h := newHarness(t)
	a, b := h.pair(o)
	x := &e2e{h: h, a: a, b: b, aBuf: a.d.region(e2eSize, 0), bBuf: b.d.region(e2eSize, 0)}
	copy(x.aBuf.buf, hPattern(e2eSize, 11))
	copy(x.bBuf.buf, hPattern(e2eSize, 22))
	return x
}

// one posts wr, runs the network until quiet and returns the single send completion.
func (x *e2e) one(wr qp.SendWR) cq.WC {
	x.h.t.Helper()
	wr.Flags |= qp.SendSignaled
	x.a.post(wr)
	x.h.settle(10 * time.Second)
	wcs := x.a.pollSend()
	if len(wcs) != 1 {
		x.h.t.Fatalf("got %d send completions, want 1: %+v", len(wcs), wcs)
	}
	return wcs[0]
}

func TestE2ESend(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sizes  []int // SGE lengths
		inline bool
		imm    bool
		se     bool
		mtu    qp.MTU
	}{
		{name: "zero", sizes: nil},
		{name: "one byte", sizes: []int{1}},
		{name: "odd", sizes: []int{1023}},
		{name: "exactly mtu", sizes: []int{1024}},
		{name: "mtu plus one", sizes: []int{1025}},
		{name: "multi packet multi sge", sizes: []int{3, 1000, 4096, 7, 2500}},
		{name: "256 mtu", sizes: []int{5000}, mtu: qp.MTU256},
		{name: "4096 mtu", sizes: []int{20000}, mtu: qp.MTU4096},
		{name: "inline", sizes: []int{300}, inline: true},
		{name: "imm", sizes: []int{3000}, imm: true},
		{name: "solicited imm", sizes: []int{10}, imm: true, se: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := newE2E(t, hQPOptions{mtu: tc.mtu})
			var sges []mr.SGE
			var want []byte
			off := 0
			for _, n := range tc.sizes {
				sges = append(sges, x.aBuf.sge(off, n))
				want = append(want, x.aBuf.buf[off:off+n]...)
				off += n + 13
			}
			recv := x.b.d.region(len(want)+100, 0)
			x.b.postRecv(99, recv.sge(0, len(recv.buf)))
			wr := qp.SendWR{ID: 5, Opcode: qp.WRSend, SGList: sges, ImmData: 0xA1B2C3D4}
			if tc.inline {
				wr.SGList, wr.InlineData, wr.Flags = nil, append([]byte(nil), want...), qp.SendInline
			}
			if tc.imm {
				wr.Opcode = qp.WRSendWithImm
			}
			if tc.se {
				wr.Flags |= qp.SendSolicited
			}
			wc := x.one(wr)
			wantWC(t, wc, 5, cq.WCSuccess, cq.OpcodeSend)
			if wc.ByteLen != uint32(len(want)) {
				t.Fatalf("send byte_len %d, want %d", wc.ByteLen, len(want))
			}
			rw := x.b.pollRecv()
			if len(rw) != 1 {
				t.Fatalf("recv completions %+v", rw)
			}
			wantWC(t, rw[0], 99, cq.WCSuccess, cq.OpcodeRecv)
			if rw[0].ByteLen != uint32(len(want)) {
				t.Fatalf("recv byte_len %d, want %d", rw[0].ByteLen, len(want))
			}
			if tc.imm != (rw[0].WCFlags&cq.WCFlagWithImm != 0) || (tc.imm && rw[0].ImmData != 0xA1B2C3D4) {
				t.Fatalf("recv imm flags %v data %#x", rw[0].WCFlags, rw[0].ImmData)
			}
			if !bytes.Equal(recv.buf[:len(want)], want) || !bytes.Equal(recv.buf[len(want):], make([]byte, 100)) {
				t.Fatal("received data differs")
			}
		})
	}
}

func TestE2EWrite(t *testing.T) {
	for _, n := range []int{0, 1, 1024, 1025, 9999, 40000} {
		for _, imm := range []bool{false, true} {
			x := newE2E(t, hQPOptions{})
			wr := qp.SendWR{ID: 3, Opcode: qp.WRRDMAWrite, SGList: []mr.SGE{x.aBuf.sge(100, n)},
				RDMA: qp.RDMAInfo{RemoteAddr: x.bBuf.mr.IOVA() + 7, RKey: x.bBuf.mr.RKey()}, ImmData: 0x01020304}
			if imm {
				wr.Opcode = qp.WRRDMAWriteWithImm
				x.b.postRecv(44)
			}
			before := append([]byte(nil), x.bBuf.buf...)
			wc := x.one(wr)
			wantWC(t, wc, 3, cq.WCSuccess, cq.OpcodeRDMAWrite)
			want := append([]byte(nil), before...)
			copy(want[7:], x.aBuf.buf[100:100+n])
			if !bytes.Equal(x.bBuf.buf, want) {
				t.Fatalf("n=%d: target memory differs", n)
			}
			rw := x.b.pollRecv()
			if imm {
				if len(rw) != 1 || rw[0].Opcode != cq.OpcodeRecvRDMAWithImm || rw[0].ImmData != 0x01020304 || rw[0].ByteLen != uint32(n) {
					t.Fatalf("n=%d: recv completions %+v", n, rw)
				}
			} else if len(rw) != 0 {
				t.Fatalf("n=%d: unexpected recv completions %+v", n, rw)
			}
		}
	}
}

func TestE2ERead(t *testing.T) {
	for _, n := range []int{0, 1, 1024, 1025, 9999, 40000} {
		x := newE2E(t, hQPOptions{})
		// Scatter the result over three SGEs.
		k := n / 3
		sges := []mr.SGE{x.aBuf.sge(0, k), x.aBuf.sge(20000, k), x.aBuf.sge(45000, n-2*k)}
		before := append([]byte(nil), x.aBuf.buf...)
		wc := x.one(qp.SendWR{ID: 8, Opcode: qp.WRRDMARead, SGList: sges,
			RDMA: qp.RDMAInfo{RemoteAddr: x.bBuf.mr.IOVA() + 3, RKey: x.bBuf.mr.RKey()}})
		wantWC(t, wc, 8, cq.WCSuccess, cq.OpcodeRDMARead)
		if wc.ByteLen != uint32(n) {
			t.Fatalf("read byte_len %d, want %d", wc.ByteLen, n)
		}
		want := append([]byte(nil), before...)
		src := x.bBuf.buf[3 : 3+n]
		copy(want[0:k], src[:k])
		copy(want[20000:20000+k], src[k:2*k])
		copy(want[45000:45000+n-2*k], src[2*k:])
		if !bytes.Equal(x.aBuf.buf, want) {
			t.Fatalf("n=%d: read data differs", n)
		}
	}
}

func TestE2EAtomics(t *testing.T) {
	x := newE2E(t, hQPOptions{})
	target := x.bBuf.buf[64:72]
	binary.NativeEndian.PutUint64(target, 1000)
	va := x.bBuf.mr.IOVA() + 64
	rkey := x.bBuf.mr.RKey()
	res := x.aBuf.sge(8, 8)

	wc := x.one(qp.SendWR{ID: 1, Opcode: qp.WRAtomicFetchAndAdd, SGList: []mr.SGE{res},
		Atomic: qp.AtomicInfo{RemoteAddr: va, RKey: rkey, CompareAdd: 5}})
	wantWC(t, wc, 1, cq.WCSuccess, cq.OpcodeFetchAdd)
	if got := binary.NativeEndian.Uint64(x.aBuf.buf[8:]); got != 1000 {
		t.Fatalf("fetch-add returned %d, want 1000", got)
	}
	if got := binary.NativeEndian.Uint64(target); got != 1005 {
		t.Fatalf("target after fetch-add %d", got)
	}
	// Compare fails: no swap, original returned.
	wc = x.one(qp.SendWR{ID: 2, Opcode: qp.WRAtomicCmpAndSwp, SGList: []mr.SGE{res},
		Atomic: qp.AtomicInfo{RemoteAddr: va, RKey: rkey, CompareAdd: 1, Swap: 77}})
	wantWC(t, wc, 2, cq.WCSuccess, cq.OpcodeCompSwap)
	if got := binary.NativeEndian.Uint64(x.aBuf.buf[8:]); got != 1005 || binary.NativeEndian.Uint64(target) != 1005 {
		t.Fatalf("failed compare: returned %d, target %d", got, binary.NativeEndian.Uint64(target))
	}
	// Compare matches: swapped.
	wc = x.one(qp.SendWR{ID: 3, Opcode: qp.WRAtomicCmpAndSwp, SGList: []mr.SGE{res},
		Atomic: qp.AtomicInfo{RemoteAddr: va, RKey: rkey, CompareAdd: 1005, Swap: 77}})
	wantWC(t, wc, 3, cq.WCSuccess, cq.OpcodeCompSwap)
	if got := binary.NativeEndian.Uint64(x.aBuf.buf[8:]); got != 1005 || binary.NativeEndian.Uint64(target) != 77 {
		t.Fatalf("compare-swap: returned %d, target %d", got, binary.NativeEndian.Uint64(target))
	}
	// ATOMIC_WRITE stores 8 bytes as given.
	wc = x.one(qp.SendWR{ID: 4, Opcode: qp.WRAtomicWrite, RDMA: qp.RDMAInfo{RemoteAddr: va, RKey: rkey},
		AtomicWrite: [8]byte{1, 2, 3, 4, 5, 6, 7, 8}})
	wantWC(t, wc, 4, cq.WCSuccess, cq.OpcodeAtomicWrite)
	if !bytes.Equal(target, []byte{1, 2, 3, 4, 5, 6, 7, 8}) {
		t.Fatalf("atomic write left %x", target)
	}
	// FLUSH of a range and of the region.
	for i, lvl := range []mr.FlushLevel{mr.FlushRange, mr.FlushMR} {
		wc = x.one(qp.SendWR{ID: uint64(5 + i), Opcode: qp.WRFlush, RDMA: qp.RDMAInfo{RemoteAddr: va, RKey: rkey},
			Flush: qp.FlushInfo{Length: 64, Type: qp.FlushGlobal | qp.FlushPersistent, Level: lvl}})
		wantWC(t, wc, uint64(5+i), cq.WCSuccess, cq.OpcodeFlush)
	}
}

// TestE2EMessageCounters checks rdma_sends and rdma_recvs against rxe's meaning: SEND work
// requests retired, and successful receive completions, not packets or every message.
func TestE2EMessageCounters(t *testing.T) {
	x := newE2E(t, hQPOptions{mtu: qp.MTU1024})
	recv := x.b.d.region(8192, 0)
	x.b.postRecv(1, recv.sge(0, 4096))
	x.b.postRecv(2, recv.sge(4096, 4096))
	rdma := qp.RDMAInfo{RemoteAddr: x.bBuf.mr.IOVA(), RKey: x.bBuf.mr.RKey()}
	x.a.post(
		qp.SendWR{ID: 1, Opcode: qp.WRSend, SGList: []mr.SGE{x.aBuf.sge(0, 3000)}},
		qp.SendWR{ID: 2, Opcode: qp.WRRDMAWrite, SGList: []mr.SGE{x.aBuf.sge(0, 3000)}, RDMA: rdma},
		qp.SendWR{ID: 3, Opcode: qp.WRRDMAWriteWithImm, SGList: []mr.SGE{x.aBuf.sge(0, 10)}, RDMA: rdma},
		qp.SendWR{ID: 4, Opcode: qp.WRRDMARead, SGList: []mr.SGE{x.aBuf.sge(0, 3000)}, RDMA: rdma},
		qp.SendWR{ID: 5, Opcode: qp.WRAtomicFetchAndAdd, Flags: qp.SendSignaled, SGList: []mr.SGE{x.aBuf.sge(8192, 8)},
			Atomic: qp.AtomicInfo{RemoteAddr: rdma.RemoteAddr, RKey: rdma.RKey, CompareAdd: 1}},
	)
	x.h.settle(10 * time.Second)
	if wcs := x.a.pollSend(); len(wcs) != 1 || wcs[0].WRID != 5 || wcs[0].Status != cq.WCSuccess {
		t.Fatalf("send completions %+v", wcs)
	}
	if n := len(x.b.pollRecv()); n != 2 {
		t.Fatalf("%d receive completions", n)
	}
	if got := x.a.d.count(counter.RDMASends); got != 1 {
		t.Fatalf("rdma_sends %d, want 1 (one SEND work request)", got)
	}
	if got := x.b.d.count(counter.RDMARecvs); got != 2 {
		t.Fatalf("rdma_recvs %d, want 2 (the SEND and the WRITE with immediate)", got)
	}
}
