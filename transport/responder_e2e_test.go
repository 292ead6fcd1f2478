package transport

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

// dropFirst returns a tap that drops the first packet with opcode op (after skip earlier ones)
// and counts how many it saw.
func dropFirst(op packet.Opcode, skip int, seen *int) func(*hPacket, *packet.Parsed) bool {
	dropped := false
	return func(_ *hPacket, p *packet.Parsed) bool {
		if p.Opcode() != op {
			return true
		}
		*seen++
		if !dropped && *seen > skip {
			dropped = true
			return false
		}
		return true
	}
}

func TestResponderE2EReadReplay(t *testing.T) {
	x := newE2E(t, hQPOptions{mtu: qp.MTU256})
	var seen int
	// Lose the second MIDDLE response: the requester asks again from its PSN and the responder
	// replays the tail from its resource.
	x.h.tap = dropFirst(packet.RCRDMAReadResponseMiddle, 1, &seen)
	const n = 10*256 + 7
	wc := x.one(qp.SendWR{ID: 1, Opcode: qp.WRRDMARead, SGList: []mr.SGE{x.aBuf.sge(0, n)},
		RDMA: qp.RDMAInfo{RemoteAddr: x.bBuf.mr.IOVA() + 5, RKey: x.bBuf.mr.RKey()}})
	wantWC(t, wc, 1, cq.WCSuccess, cq.OpcodeRDMARead)
	if !bytes.Equal(x.aBuf.buf[:n], x.bBuf.buf[5:5+n]) {
		t.Fatal("read data differs after a replay")
	}
	if x.b.d.count(counter.DuplicateRequest) == 0 {
		t.Fatal("the retried READ was not handled as a duplicate")
	}
}

func TestResponderE2EAtomicAckLost(t *testing.T) {
	x := newE2E(t, hQPOptions{})
	binary.NativeEndian.PutUint64(x.bBuf.buf[8:], 40)
	var seen int
	x.h.tap = dropFirst(packet.RCAtomicAcknowledge, 0, &seen)
	wc := x.one(qp.SendWR{ID: 1, Opcode: qp.WRAtomicFetchAndAdd, SGList: []mr.SGE{x.aBuf.sge(0, 8)},
		Atomic: qp.AtomicInfo{RemoteAddr: x.bBuf.mr.IOVA() + 8, RKey: x.bBuf.mr.RKey(), CompareAdd: 2}})
	wantWC(t, wc, 1, cq.WCSuccess, cq.OpcodeFetchAdd)
	if seen < 2 {
		t.Fatalf("the atomic was not retried (%d acknowledgements)", seen)
	}
	if got := binary.NativeEndian.Uint64(x.aBuf.buf); got != 40 {
		t.Fatalf("fetch-add returned %d, want 40", got)
	}
	if got := binary.NativeEndian.Uint64(x.bBuf.buf[8:]); got != 42 {
		t.Fatalf("target %d: the retried atomic was executed again", got)
	}
}

func TestResponderE2ERNRThenSuccess(t *testing.T) {
	x := newE2E(t, hQPOptions{minRNRTimer: 14})
	x.a.post(qp.SendWR{ID: 1, Opcode: qp.WRSend, Flags: qp.SendSignaled, SGList: []mr.SGE{x.aBuf.sge(0, 3000)}})
	// Let a few RNR NAKs go by (1.28 ms each) before a receive is posted.
	x.h.runUntil(func() bool { return x.b.d.count(counter.SendRNRErr) >= 3 }, time.Second)
	if len(x.a.pollSend()) != 0 {
		t.Fatal("send completed without a receive")
	}
	recv := x.b.d.region(4096, 0)
	x.b.postRecv(2, recv.sge(0, 4096))
	x.h.settle(10 * time.Second)
	if wcs := x.a.pollSend(); len(wcs) != 1 || wcs[0].Status != cq.WCSuccess {
		t.Fatalf("send completions %+v", wcs)
	}
	if wcs := x.b.pollRecv(); len(wcs) != 1 || wcs[0].ByteLen != 3000 {
		t.Fatalf("recv completions %+v", wcs)
	}
	if !bytes.Equal(recv.buf[:3000], x.aBuf.buf[:3000]) {
		t.Fatal("data")
	}
	if x.a.d.count(counter.RcvdRNRErr) < 3 {
		t.Fatal("RNR NAKs not counted by the requester")
	}
}

func TestResponderE2ERemoteAccessError(t *testing.T) {
	x := newE2E(t, hQPOptions{})
	before := append([]byte(nil), x.bBuf.buf...)
	wc := x.one(qp.SendWR{ID: 1, Opcode: qp.WRRDMAWrite, SGList: []mr.SGE{x.aBuf.sge(0, 5000)},
		RDMA: qp.RDMAInfo{RemoteAddr: x.bBuf.mr.IOVA() + e2eSize - 100, RKey: x.bBuf.mr.RKey()}})
	wantWC(t, wc, 1, cq.WCRemAccessErr, cq.OpcodeRDMAWrite)
	if !bytes.Equal(x.bBuf.buf, before) {
		t.Fatal("a write beyond the region changed memory")
	}
	if s := x.b.q.State(); s != qp.StateErr {
		t.Fatalf("responder state %v", s)
	}
	if !slices.Contains(x.b.d.eventTypes(x.b.q), qp.EventQPAccessErr) {
		t.Fatalf("responder events %v", x.b.d.eventTypes(x.b.q))
	}
}

func TestResponderE2EUCLoss(t *testing.T) {
	x := newE2E(t, hQPOptions{typ: qp.TypeUC, mtu: qp.MTU256})
	recv := x.b.d.region(8192, 0)
	x.b.postRecv(1, recv.sge(0, 4096))
	x.b.postRecv(2, recv.sge(4096, 4096))
	var seen int
	x.h.tap = dropFirst(packet.UCSendMiddle, 0, &seen)
	x.a.post(
		qp.SendWR{ID: 10, Opcode: qp.WRSend, SGList: []mr.SGE{x.aBuf.sge(0, 1000)}},
		qp.SendWR{ID: 11, Opcode: qp.WRSend, SGList: []mr.SGE{x.aBuf.sge(1000, 700)}},
	)
	x.h.settle(time.Second)
	// The first message lost a packet; the second lands in the first receive WQE.
	wcs := x.b.pollRecv()
	if len(wcs) != 1 || wcs[0].WRID != 1 || wcs[0].ByteLen != 700 {
		t.Fatalf("recv completions %+v", wcs)
	}
	if !bytes.Equal(recv.buf[:700], x.aBuf.buf[1000:1700]) {
		t.Fatal("data")
	}
}

// TestResponderE2ELossy runs a mixed workload over a network that loses, reorders, duplicates
// and corrupts packets, and checks that every operation completes once with the right data: the
// responder's duplicate detection, replay and resources make retransmission invisible.
func TestResponderE2ELossy(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			x := newE2E(t, hQPOptions{mtu: qp.MTU256, maxRdAtomic: 4, maxDestRd: 4})
			x.h.seed(seed)
			x.h.faults = hFaults{Loss: 0.05, Reorder: 0.05, Dup: 0.05, Corrupt: 0.02}
			rng := rand.New(rand.NewPCG(seed, 7))
			recv := x.b.d.region(e2eSize, 0)
			src := x.b.d.region(e2eSize, 0) // what the READs read; nothing writes it
			copy(src.buf, hPattern(e2eSize, 33))
			target := x.b.d.region(8, 0)
			const ops = 40
			var wrs []qp.SendWR
			type check struct {
				dst, src []byte
			}
			var checks []check
			sends := 0
			for i := range ops {
				off := i * 1024
				n := 1 + rng.IntN(1000)
				wr := qp.SendWR{ID: uint64(i), Flags: qp.SendSignaled}
				switch i % 4 {
				case 0:
					wr.Opcode, wr.SGList = qp.WRSend, []mr.SGE{x.aBuf.sge(off, n)}
					x.b.postRecv(uint64(i), recv.sge(off, 1024))
					checks = append(checks, check{recv.buf[off : off+n], x.aBuf.buf[off : off+n]})
					sends++
				case 1:
					wr.Opcode, wr.SGList = qp.WRRDMAWrite, []mr.SGE{x.aBuf.sge(off, n)}
					wr.RDMA = qp.RDMAInfo{RemoteAddr: x.bBuf.mr.IOVA() + uint64(off), RKey: x.bBuf.mr.RKey()}
					checks = append(checks, check{x.bBuf.buf[off : off+n], x.aBuf.buf[off : off+n]})
				case 2:
					wr.Opcode, wr.SGList = qp.WRRDMARead, []mr.SGE{x.aBuf.sge(off, n)}
					wr.RDMA = qp.RDMAInfo{RemoteAddr: src.mr.IOVA() + uint64(off), RKey: src.mr.RKey()}
					checks = append(checks, check{x.aBuf.buf[off : off+n], src.buf[off : off+n]})
				case 3:
					wr.Opcode, wr.SGList = qp.WRAtomicFetchAndAdd, []mr.SGE{x.aBuf.sge(off, 8)}
					wr.Atomic = qp.AtomicInfo{RemoteAddr: target.mr.IOVA(), RKey: target.mr.RKey(), CompareAdd: 1}
				}
				wrs = append(wrs, wr)
			}
			x.a.post(wrs...)
			done := func() bool { return x.a.scq.Len() == ops }
			if !x.h.runUntil(done, time.Minute) {
				t.Fatalf("only %d of %d operations completed", x.a.scq.Len(), ops)
			}
			for _, wc := range x.a.pollSend() {
				if wc.Status != cq.WCSuccess {
					t.Fatalf("completion %+v", wc)
				}
			}
			if wcs := x.b.pollRecv(); len(wcs) != sends {
				t.Fatalf("%d receive completions, want %d", len(wcs), sends)
			}
			for i, c := range checks {
				if !bytes.Equal(c.dst, c.src) {
					t.Fatalf("operation %d: data differs", i)
				}
			}
			// Each fetch-and-add ran exactly once: the counter is their number and the values
			// returned are 0..n-1.
			var got []uint64
			for i := 3; i < ops; i += 4 {
				got = append(got, binary.NativeEndian.Uint64(x.aBuf.buf[i*1024:]))
			}
			slices.Sort(got)
			for i, v := range got {
				if v != uint64(i) {
					t.Fatalf("fetch-add results %v", got)
				}
			}
			if c := binary.NativeEndian.Uint64(target.buf); c != uint64(len(got)) {
				t.Fatalf("counter %d after %d fetch-adds", c, len(got))
			}
			t.Logf("network: %+v; responder duplicates %d, out of sequence %d",
				x.h.stats, x.b.d.count(counter.DuplicateRequest), x.b.d.count(counter.OutOfSeqRequest))
		})
	}
}
