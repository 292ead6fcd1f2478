package transport

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	require.Len(x.h.t, wcs, 1, "send completions")
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
			require.Equal(t, uint32(len(want)), wc.ByteLen, "send byte_len")
			rw := x.b.pollRecv()
			require.Len(t, rw, 1, "recv completions")
			wantWC(t, rw[0], 99, cq.WCSuccess, cq.OpcodeRecv)
			require.Equal(t, uint32(len(want)), rw[0].ByteLen, "recv byte_len")
			require.Equal(t, tc.imm, rw[0].WCFlags&cq.WCFlagWithImm != 0, "recv imm flag in %v", rw[0].WCFlags)
			if tc.imm {
				require.Equal(t, uint32(0xA1B2C3D4), rw[0].ImmData, "recv imm data")
			}
			require.True(t, bytes.Equal(recv.buf[:len(want)], want), "received data differs")
			require.Equal(t, make([]byte, 100), recv.buf[len(want):], "received data spilled past the message")
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
			require.True(t, bytes.Equal(x.bBuf.buf, want), "n=%d: target memory differs", n)
			rw := x.b.pollRecv()
			if imm {
				require.Len(t, rw, 1, "n=%d: recv completions", n)
				require.Equal(t, cq.OpcodeRecvRDMAWithImm, rw[0].Opcode, "n=%d: recv opcode", n)
				require.Equal(t, uint32(0x01020304), rw[0].ImmData, "n=%d: recv imm data", n)
				require.Equal(t, uint32(n), rw[0].ByteLen, "n=%d: recv byte_len", n)
			} else {
				require.Empty(t, rw, "n=%d: unexpected recv completions", n)
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
		require.Equal(t, uint32(n), wc.ByteLen, "read byte_len")
		want := append([]byte(nil), before...)
		src := x.bBuf.buf[3 : 3+n]
		copy(want[0:k], src[:k])
		copy(want[20000:20000+k], src[k:2*k])
		copy(want[45000:45000+n-2*k], src[2*k:])
		require.True(t, bytes.Equal(x.aBuf.buf, want), "n=%d: read data differs", n)
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
	require.Equal(t, uint64(1000), binary.NativeEndian.Uint64(x.aBuf.buf[8:]), "fetch-add returned")
	require.Equal(t, uint64(1005), binary.NativeEndian.Uint64(target), "target after fetch-add")
	// Compare fails: no swap, original returned.
	wc = x.one(qp.SendWR{ID: 2, Opcode: qp.WRAtomicCmpAndSwp, SGList: []mr.SGE{res},
		Atomic: qp.AtomicInfo{RemoteAddr: va, RKey: rkey, CompareAdd: 1, Swap: 77}})
	wantWC(t, wc, 2, cq.WCSuccess, cq.OpcodeCompSwap)
	require.Equal(t, uint64(1005), binary.NativeEndian.Uint64(x.aBuf.buf[8:]), "failed compare: returned")
	require.Equal(t, uint64(1005), binary.NativeEndian.Uint64(target), "failed compare: target")
	// Compare matches: swapped.
	wc = x.one(qp.SendWR{ID: 3, Opcode: qp.WRAtomicCmpAndSwp, SGList: []mr.SGE{res},
		Atomic: qp.AtomicInfo{RemoteAddr: va, RKey: rkey, CompareAdd: 1005, Swap: 77}})
	wantWC(t, wc, 3, cq.WCSuccess, cq.OpcodeCompSwap)
	require.Equal(t, uint64(1005), binary.NativeEndian.Uint64(x.aBuf.buf[8:]), "compare-swap: returned")
	require.Equal(t, uint64(77), binary.NativeEndian.Uint64(target), "compare-swap: target")
	// ATOMIC_WRITE stores 8 bytes as given.
	wc = x.one(qp.SendWR{ID: 4, Opcode: qp.WRAtomicWrite, RDMA: qp.RDMAInfo{RemoteAddr: va, RKey: rkey},
		AtomicWrite: [8]byte{1, 2, 3, 4, 5, 6, 7, 8}})
	wantWC(t, wc, 4, cq.WCSuccess, cq.OpcodeAtomicWrite)
	require.Equal(t, []byte{1, 2, 3, 4, 5, 6, 7, 8}, target, "atomic write")
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
	wcs := x.a.pollSend()
	require.Len(t, wcs, 1, "send completions")
	require.Equal(t, uint64(5), wcs[0].WRID)
	require.Equal(t, cq.WCSuccess, wcs[0].Status)
	require.Len(t, x.b.pollRecv(), 2, "receive completions")
	require.Equal(t, uint64(1), x.a.d.count(counter.RDMASends), "rdma_sends (one SEND work request)")
	require.Equal(t, uint64(2), x.b.d.count(counter.RDMARecvs), "rdma_recvs (the SEND and the WRITE with immediate)")
}

// TestE2ELinkLocalZones connects two QPs by IPv6 link-local GIDs (GID index 0 on rxe) on devices
// whose sockets report both ends of every received packet with the interface's zone, while the
// address vectors hold the zone-less GIDs. Requests, acknowledgements and READ responses must
// still be recognised as coming from the peer.
func TestE2ELinkLocalZones(t *testing.T) {
	h := newHarness(t)
	for _, a := range []string{"fe80::5054:ff:fe67:7801", "fe80::5054:ff:fe67:7802"} {
		h.device(a).zone = "br0"
	}
	a, b := h.pair(hQPOptions{})
	x := &e2e{h: h, a: a, b: b, aBuf: a.d.region(e2eSize, 0), bBuf: b.d.region(e2eSize, 0)}
	copy(x.aBuf.buf, hPattern(e2eSize, 11))
	copy(x.bBuf.buf, hPattern(e2eSize, 22))

	recv := b.d.region(5000, 0)
	b.postRecv(9, recv.sge(0, len(recv.buf)))
	wantWC(t, x.one(qp.SendWR{ID: 1, Opcode: qp.WRSend, SGList: []mr.SGE{x.aBuf.sge(0, 3000)}}), 1, cq.WCSuccess, cq.OpcodeSend)
	rw := b.pollRecv()
	require.Len(t, rw, 1, "receive completions (path drops %d, %d)", a.d.count(counter.RcvdWrongPath), b.d.count(counter.RcvdWrongPath))
	wantWC(t, rw[0], 9, cq.WCSuccess, cq.OpcodeRecv)
	require.True(t, bytes.Equal(recv.buf[:3000], x.aBuf.buf[:3000]), "sent data differs")

	wc := x.one(qp.SendWR{ID: 2, Opcode: qp.WRRDMARead, SGList: []mr.SGE{x.aBuf.sge(100, 2500)},
		RDMA: qp.RDMAInfo{RemoteAddr: x.bBuf.mr.IOVA(), RKey: x.bBuf.mr.RKey()}})
	wantWC(t, wc, 2, cq.WCSuccess, cq.OpcodeRDMARead)
	require.True(t, bytes.Equal(x.aBuf.buf[100:2600], x.bBuf.buf[:2500]), "read data differs")
	for _, d := range h.devs {
		assert.Zero(t, d.count(counter.RcvdWrongPath), "packets device %v dropped as not from its peer", d.addr)
	}
	h.settle(time.Second)
}
