package transport

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

// FuzzCompleterResponses feeds a requester with outstanding work of every kind a sequence of
// arbitrary responses (any response opcode, PSN near the window, syndrome and payload length)
// and clock jumps. The completer must never panic, must complete WQEs in posting order and must
// keep its PSNs within what was sent.
func FuzzCompleterResponses(f *testing.F) {
	f.Add([]byte{0, 0, 0x1f, 0, 1, 2, 0x1f, 0, 2, 5, 0x1f, 3})
	f.Add([]byte{0, 1, 0x60, 0, 0, 3, 0x20, 0, 3, 3, 0x1f, 2, 3, 4, 0x1f, 1, 3, 5, 0x1f, 200})
	f.Add([]byte{1, 6, 0x1f, 0, 4, 6, 0x62, 0, 255, 0, 0, 0})
	f.Add([]byte{2, 3, 0x1f, 0, 3, 4, 0x1f, 0, 3, 5, 0x1f, 0, 5, 7, 0x1f, 0})
	f.Fuzz(fuzzCompleterResponses)
}

// fuzzMaxRecords bounds the responses one input feeds. Past a few dozen the requester has
// completed or failed everything it had, so longer inputs add no behaviour, only cost: each
// candidate the fuzzer's minimizer tries (quadratic in the input length) runs the whole input.
const fuzzMaxRecords = 32

// fuzzQP is the small QP the completer fuzz target needs: the seven WQEs it posts, CQs that
// hold their completions. The harness defaults (4096-entry CQs, 256-entry rings) cost 1.5 MB of
// allocation per input, which made every exec a few milliseconds and the minimization of one
// new input last tens of seconds.
var fuzzQP = hQPOptions{
	mtu: qp.MTU1024, sqPSN: 0xFFFFFD, timeout: 10, retryCnt: 2, rnrRetry: 2, noRetryDflts: true,
	caps: qp.Caps{MaxSendWR: 8, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}, cqDepth: 8,
}

func fuzzCompleterResponses(t *testing.T, data []byte) { completerInput(t, data) }

// completerInput runs one fuzz input and returns the probe it ran on.
func completerInput(t *testing.T, data []byte) *probe {
	data = data[:min(len(data), 4*fuzzMaxRecords)]
	pr := newProbe(t, fuzzQP)
	buf := pr.a.d.region(16384, 0)
	sig := qp.SendSignaled
	rdma := qp.RDMAInfo{RemoteAddr: 0x1000, RKey: 9}
	pr.a.post(
		qp.SendWR{ID: 1, Opcode: qp.WRSend, Flags: sig, SGList: []mr.SGE{buf.sge(0, 3000)}},
		qp.SendWR{ID: 2, Opcode: qp.WRRDMARead, Flags: sig, SGList: []mr.SGE{buf.sge(4000, 2500)}, RDMA: rdma},
		qp.SendWR{ID: 3, Opcode: qp.WRAtomicFetchAndAdd, Flags: sig, SGList: []mr.SGE{buf.sge(8000, 8)}, Atomic: qp.AtomicInfo{RKey: 9}},
		qp.SendWR{ID: 4, Opcode: qp.WRRDMAWrite, Flags: sig, SGList: []mr.SGE{buf.sge(0, 1500)}, RDMA: rdma},
		qp.SendWR{ID: 5, Opcode: qp.WRAtomicWrite, Flags: sig, RDMA: rdma},
		qp.SendWR{ID: 6, Opcode: qp.WRFlush, Flags: sig, RDMA: rdma, Flush: qp.FlushInfo{Type: qp.FlushGlobal}},
		qp.SendWR{ID: 7, Opcode: qp.WRSend, Flags: sig},
	)
	pr.idle()
	ops := []packet.Opcode{packet.RCAcknowledge, packet.RCAtomicAcknowledge, packet.RCRDMAReadResponseFirst,
		packet.RCRDMAReadResponseMiddle, packet.RCRDMAReadResponseLast, packet.RCRDMAReadResponseOnly}
	payload := make([]byte, 2048)
	base := packet.PSN(0xFFFFFD)
	lastID := uint64(0)
	for len(data) >= 4 {
		rec := data[:4]
		data = data[4:]
		if rec[0] == 255 {
			pr.h.advance(time.Duration(rec[1]) * time.Millisecond)
			pr.idle()
		} else {
			op := ops[int(rec[0])%len(ops)]
			hd := &packet.Headers{BTH: packet.BTHFields{Opcode: op, PSN: base.Add(uint32(rec[1]) % 16).Sub(2)}}
			hd.AETH = packet.AETHFields{Syndrome: packet.Syndrome(rec[2]), MSN: 1}
			hd.AtomicAckETH.OriginalRemoteData = uint64(rec[3])
			n := 0
			if op.HasPayload() {
				n = int(rec[3]) * 8
			}
			pr.respond(hd, payload[:n])
		}
		for _, wc := range pr.a.pollSend() {
			require.Greater(t, wc.WRID, lastID, "completions out of posting order")
			lastID = wc.WRID
		}
		c, r := &pr.a.e.comp, &pr.a.e.req
		require.False(t, r.tip.LessThan(c.psn), "completer PSN %#x beyond tip %#x", uint32(c.psn), uint32(r.tip))
		require.LessOrEqual(t, r.tip.Diff(base), int32(16), "tip %#x beyond what was sent", uint32(r.tip))
		require.GreaterOrEqual(t, r.rdAtomic, 0, "initiator depth count")
		require.LessOrEqual(t, r.rdAtomic, 4, "initiator depth count")
	}
	return pr
}

// TestFuzzCompleterResponsesCost pins what made FuzzCompleterResponses stall for seconds at
// 0 execs/s: not a slow completer path (no single input took more than milliseconds) but the
// cost of each exec times the minimizer's candidates, quadratic in the input length. An input
// is cut to fuzzMaxRecords responses, and one exec allocates a bounded amount.
func TestFuzzCompleterResponsesCost(t *testing.T) {
	// A long stream of cumulative ACKs and clock jumps that keeps the requester busy.
	var long []byte
	for i := range 1000 {
		long = append(long, 0, byte(i%16), 0x1f, 0)
		if i%8 == 7 {
			long = append(long, 255, 20, 0, 0)
		}
	}
	pr := completerInput(t, long)
	require.LessOrEqual(t, pr.h.stats.Delivered, fuzzMaxRecords, "responses delivered for one input")

	const runs = 10
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		completerInput(t, long)
	}
	runtime.ReadMemStats(&after)
	perExec := (after.TotalAlloc - before.TotalAlloc) / runs
	require.Less(t, perExec, uint64(512<<10), "bytes allocated per exec")
}
