package transport

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

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
	require.Equal(t, x.bBuf.buf[5:5+n], x.aBuf.buf[:n], "read data differs after a replay")
	require.NotZero(t, x.b.d.count(counter.DuplicateRequest), "the retried READ was not handled as a duplicate")
}

func TestResponderE2EAtomicAckLost(t *testing.T) {
	x := newE2E(t, hQPOptions{})
	binary.NativeEndian.PutUint64(x.bBuf.buf[8:], 40)
	var seen int
	x.h.tap = dropFirst(packet.RCAtomicAcknowledge, 0, &seen)
	wc := x.one(qp.SendWR{ID: 1, Opcode: qp.WRAtomicFetchAndAdd, SGList: []mr.SGE{x.aBuf.sge(0, 8)},
		Atomic: qp.AtomicInfo{RemoteAddr: x.bBuf.mr.IOVA() + 8, RKey: x.bBuf.mr.RKey(), CompareAdd: 2}})
	wantWC(t, wc, 1, cq.WCSuccess, cq.OpcodeFetchAdd)
	require.GreaterOrEqual(t, seen, 2, "the atomic was not retried (acknowledgements seen)")
	require.Equal(t, uint64(40), binary.NativeEndian.Uint64(x.aBuf.buf), "value fetch-add returned")
	require.Equal(t, uint64(42), binary.NativeEndian.Uint64(x.bBuf.buf[8:]), "target: the retried atomic was executed again")
}

func TestResponderE2ERNRThenSuccess(t *testing.T) {
	x := newE2E(t, hQPOptions{minRNRTimer: 14})
	x.a.post(qp.SendWR{ID: 1, Opcode: qp.WRSend, Flags: qp.SendSignaled, SGList: []mr.SGE{x.aBuf.sge(0, 3000)}})
	// Let a few RNR NAKs go by (1.28 ms each) before a receive is posted.
	x.h.runUntil(func() bool { return x.b.d.count(counter.SendRNRErr) >= 3 }, time.Second)
	require.Empty(t, x.a.pollSend(), "send completed without a receive")
	recv := x.b.d.region(4096, 0)
	x.b.postRecv(2, recv.sge(0, 4096))
	x.h.settle(10 * time.Second)
	wcs := x.a.pollSend()
	require.Len(t, wcs, 1, "send completions")
	require.Equal(t, cq.WCSuccess, wcs[0].Status, "send completion status")
	wcs = x.b.pollRecv()
	require.Len(t, wcs, 1, "receive completions")
	require.Equal(t, uint32(3000), wcs[0].ByteLen, "receive byte_len")
	require.Equal(t, x.aBuf.buf[:3000], recv.buf[:3000], "data")
	require.GreaterOrEqual(t, x.a.d.count(counter.RcvdRNRErr), uint64(3), "RNR NAKs not counted by the requester")
}

func TestResponderE2ERemoteAccessError(t *testing.T) {
	x := newE2E(t, hQPOptions{})
	before := append([]byte(nil), x.bBuf.buf...)
	wc := x.one(qp.SendWR{ID: 1, Opcode: qp.WRRDMAWrite, SGList: []mr.SGE{x.aBuf.sge(0, 5000)},
		RDMA: qp.RDMAInfo{RemoteAddr: x.bBuf.mr.IOVA() + e2eSize - 100, RKey: x.bBuf.mr.RKey()}})
	wantWC(t, wc, 1, cq.WCRemAccessErr, cq.OpcodeRDMAWrite)
	require.Equal(t, before, x.bBuf.buf, "a write beyond the region changed memory")
	require.Equal(t, qp.StateErr, x.b.q.State(), "responder state")
	require.Contains(t, x.b.d.eventTypes(x.b.q), qp.EventQPAccessErr, "responder events")
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
	require.Len(t, wcs, 1, "receive completions")
	require.Equal(t, uint64(1), wcs[0].WRID, "receive wr_id")
	require.Equal(t, uint32(700), wcs[0].ByteLen, "receive byte_len")
	require.Equal(t, x.aBuf.buf[1000:1700], recv.buf[:700], "data")
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
			completed := x.h.runUntil(done, time.Minute)
			require.True(t, completed, "only %d of %d operations completed", x.a.scq.Len(), ops)
			for _, wc := range x.a.pollSend() {
				require.Equal(t, cq.WCSuccess, wc.Status, "completion of WR %d", wc.WRID)
			}
			require.Len(t, x.b.pollRecv(), sends, "receive completions")
			for i, c := range checks {
				require.Equal(t, c.src, c.dst, "operation %d: data differs", i)
			}
			// Each fetch-and-add ran exactly once: the counter is their number and the values
			// returned are 0..n-1.
			var got, want []uint64
			for i := 3; i < ops; i += 4 {
				got = append(got, binary.NativeEndian.Uint64(x.aBuf.buf[i*1024:]))
				want = append(want, uint64(len(want)))
			}
			slices.Sort(got)
			require.Equal(t, want, got, "fetch-add results")
			require.Equal(t, uint64(len(got)), binary.NativeEndian.Uint64(target.buf), "counter after %d fetch-adds", len(got))
			t.Logf("network: %+v; responder duplicates %d, out of sequence %d",
				x.h.stats, x.b.d.count(counter.DuplicateRequest), x.b.d.count(counter.OutOfSeqRequest))
		})
	}
}
