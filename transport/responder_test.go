package transport

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

const rcAccess = mr.AccessLocalWrite | mr.AccessRemoteWrite | mr.AccessRemoteRead | mr.AccessRemoteAtomic |
	mr.AccessFlushGlobal | mr.AccessFlushPersistent

const remoteAccess = mr.AccessLocalWrite | mr.AccessRemoteWrite | mr.AccessRemoteRead | mr.AccessRemoteAtomic |
	mr.AccessFlushGlobal

func newRC(t *testing.T) *rspEnv {
	return newRspEnv(t, rspOptions{access: rcAccess, rqPSN: 100, maxDestRd: 4})
}

func TestResponderSendOnly(t *testing.T) {
	env := newRC(t)
	bufs := env.postRecv(7, 64)
	data := rspPattern(40, 1)
	p := env.req(packet.RCSendOnlyWithImmediate, 100, true, data, func(h *packet.Headers) {
		h.BTH.SolicitedEvent = true
		h.ImmDt.ImmediateData = 0xdeadbeef
	})
	rspWantAck(t, env.deliver(p), packet.SyndromeACKUnlimited, 100, 1)
	require.Equal(t, data, bufs[0][:40], "receive buffer")
	require.Zero(t, bufs[0][40], "receive buffer beyond the message")
	want := cq.WC{WRID: 7, Status: cq.WCSuccess, Opcode: cq.OpcodeRecv, ByteLen: 40, ImmData: 0xdeadbeef,
		QPNum: env.q.QPN(), WCFlags: cq.WCFlagWithImm}
	require.Equal(t, []cq.WC{want}, env.poll(), "completions")
	require.Equal(t, uint64(40), env.e.Counters().Load(counter.RcvdBytes), "rcvd_bytes")
}

func TestResponderSendWithoutAckReqIsSilent(t *testing.T) {
	env := newRC(t)
	env.postRecv(1, 64)
	rspWantNone(t, env.deliver(env.req(packet.RCSendOnly, 100, false, []byte("hi"), nil)))
	wcs := env.poll()
	require.Len(t, wcs, 1, "completions")
	require.Equal(t, uint32(2), wcs[0].ByteLen, "completion byte_len")
	// The MSN counted the message even though nothing was acknowledged.
	env.postRecv(2, 64)
	rspWantAck(t, env.deliver(env.req(packet.RCSendOnly, 101, true, nil, nil)), packet.SyndromeACKUnlimited, 101, 2)
}

func TestResponderMultiPacketSendScatters(t *testing.T) {
	env := newRC(t)
	// Two SGEs of 300 and 400 bytes take a 2.5-MTU message across the boundary mid-packet.
	bufs := env.postRecv(9, 300, 400)
	msg := rspPattern(2*rspMTUB+100, 3)
	rspWantNone(t, env.deliver(env.req(packet.RCSendFirst, 100, false, msg[:rspMTUB], nil)))
	rspWantNone(t, env.deliver(env.req(packet.RCSendMiddle, 101, false, msg[rspMTUB:2*rspMTUB], nil)))
	require.Empty(t, env.poll(), "completion before the last packet")
	ps := env.deliver(env.req(packet.RCSendLast, 102, true, msg[2*rspMTUB:], nil))
	rspWantAck(t, ps, packet.SyndromeACKUnlimited, 102, 1)
	got := append(append([]byte{}, bufs[0]...), bufs[1]...)
	require.Equal(t, msg, got[:len(msg)], "message not scattered in order")
	wcs := env.poll()
	require.Len(t, wcs, 1, "completions")
	require.Equal(t, uint64(9), wcs[0].WRID, "completion wr_id")
	require.Equal(t, uint32(len(msg)), wcs[0].ByteLen, "completion byte_len")
	require.Equal(t, cq.OpcodeRecv, wcs[0].Opcode, "completion opcode")
}

func TestResponderWrite(t *testing.T) {
	env := newRC(t)
	m, buf := env.region(4096, remoteAccess)
	msg := rspPattern(2*rspMTUB+17, 5)
	va := m.IOVA() + 100
	rspWantNone(t, env.deliver(env.req(packet.RCRDMAWriteFirst, 100, false, msg[:rspMTUB], rspRETH(va, m.RKey(), uint32(len(msg))))))
	// A middle packet with AckReq (as a requester sets every 64 packets) is acknowledged alone.
	rspWantAck(t, env.deliver(env.req(packet.RCRDMAWriteMiddle, 101, true, msg[rspMTUB:2*rspMTUB], nil)),
		packet.SyndromeACKUnlimited, 101, 0)
	rspWantAck(t, env.deliver(env.req(packet.RCRDMAWriteLast, 102, true, msg[2*rspMTUB:], nil)),
		packet.SyndromeACKUnlimited, 102, 1)
	require.Equal(t, msg, buf[100:100+len(msg)], "write landed in the wrong place")
	require.Zero(t, buf[99], "write landed in the wrong place: byte before")
	require.Zero(t, buf[100+len(msg)], "write landed in the wrong place: byte after")
	require.Empty(t, env.poll(), "RDMA WRITE without immediate completed a receive")
}

func TestResponderWriteWithImmediate(t *testing.T) {
	env := newRC(t)
	m, buf := env.region(1024, remoteAccess)
	env.postRecv(3, 16)
	msg := rspPattern(rspMTUB+10, 9)
	rspWantNone(t, env.deliver(env.req(packet.RCRDMAWriteFirst, 100, false, msg[:rspMTUB], rspRETH(m.IOVA(), m.RKey(), uint32(len(msg))))))
	rspWantAck(t, env.deliver(env.req(packet.RCRDMAWriteLastWithImmediate, 101, true, msg[rspMTUB:], func(h *packet.Headers) {
		h.ImmDt.ImmediateData = 0x01020304
	})), packet.SyndromeACKUnlimited, 101, 1)
	require.Equal(t, msg, buf[:len(msg)], "data")
	want := cq.WC{WRID: 3, Opcode: cq.OpcodeRecvRDMAWithImm, ByteLen: uint32(len(msg)), ImmData: 0x01020304,
		QPNum: env.q.QPN(), WCFlags: cq.WCFlagWithImm}
	require.Equal(t, []cq.WC{want}, env.poll(), "completions")

	// WRITE_ONLY_WITH_IMM of zero bytes: no R_Key check (C9-88), a completion with byte_len 0.
	env.postRecv(4, 16)
	rspWantAck(t, env.deliver(env.req(packet.RCRDMAWriteOnlyWithImmediate, 102, true, nil, func(h *packet.Headers) {
		h.RETH = packet.RETHFields{VirtualAddress: 1, RKey: 0xbad, DMALength: 0}
		h.ImmDt.ImmediateData = 5
	})), packet.SyndromeACKUnlimited, 102, 2)
	wcs := env.poll()
	require.Len(t, wcs, 1, "completions")
	require.Equal(t, uint64(4), wcs[0].WRID, "completion wr_id")
	require.Zero(t, wcs[0].ByteLen, "completion byte_len")
	require.Equal(t, cq.OpcodeRecvRDMAWithImm, wcs[0].Opcode, "completion opcode")
}

func TestResponderRead(t *testing.T) {
	env := newRC(t)
	m, buf := env.region(4096, remoteAccess)
	copy(buf, rspPattern(4096, 11))
	const n = 2*rspMTUB + 50
	ps := env.deliver(env.req(packet.RCRDMAReadRequest, 100, true, nil, rspRETH(m.IOVA()+8, m.RKey(), n)))
	require.Len(t, ps, 3, "response packets")
	rspWantResp(t, ps[0], packet.RCRDMAReadResponseFirst, 100, packet.SyndromeACKUnlimited, 1)
	rspWantResp(t, ps[1], packet.RCRDMAReadResponseMiddle, 101, 0, 0)
	rspWantResp(t, ps[2], packet.RCRDMAReadResponseLast, 102, packet.SyndromeACKUnlimited, 1)
	var got []byte
	for _, p := range ps {
		got = append(got, p.Payload()...)
	}
	require.Equal(t, buf[8:8+n], got, "read response payload differs from memory")
	// The READ consumed three PSNs: the next request is 103.
	env.postRecv(1, 8)
	rspWantAck(t, env.deliver(env.req(packet.RCSendOnly, 103, true, nil, nil)), packet.SyndromeACKUnlimited, 103, 2)
}

func TestResponderReadSmallAndEmpty(t *testing.T) {
	env := newRC(t)
	m, buf := env.region(64, remoteAccess)
	copy(buf, "0123456789")
	ps := env.deliver(env.req(packet.RCRDMAReadRequest, 100, false, nil, rspRETH(m.IOVA()+2, m.RKey(), 5)))
	require.Len(t, ps, 1, "response packets")
	rspWantResp(t, ps[0], packet.RCRDMAReadResponseOnly, 100, packet.SyndromeACKUnlimited, 1)
	require.Equal(t, "23456", string(ps[0].Payload()), "payload")
	// A zero-length read needs no valid R_Key and takes one PSN.
	ps = env.deliver(env.req(packet.RCRDMAReadRequest, 101, false, nil, rspRETH(0, 0x999, 0)))
	require.Len(t, ps, 1, "zero-length read: response packets")
	require.Empty(t, ps[0].Payload(), "zero-length read: payload")
	rspWantResp(t, ps[0], packet.RCRDMAReadResponseOnly, 101, packet.SyndromeACKUnlimited, 2)
}

func TestResponderReadLongerThanABurst(t *testing.T) {
	env := newRC(t)
	n := (readBurst + 3) * rspMTUB
	m, buf := env.region(n, remoteAccess)
	copy(buf, rspPattern(n, 1))
	ps := env.deliver(env.req(packet.RCRDMAReadRequest, 100, true, nil, rspRETH(m.IOVA(), m.RKey(), uint32(n))))
	require.Len(t, ps, readBurst, "packets the first call built")
	d := env.e.Deadline()
	require.True(t, d.Equal(env.now), "deadline %v with a response unfinished, want now", d)
	rest := env.run()
	require.Len(t, rest, 3, "packets Run built")
	rspWantResp(t, rest[2], packet.RCRDMAReadResponseLast, 100+uint32(readBurst)+2, packet.SyndromeACKUnlimited, 1)
	var got []byte
	for _, p := range append(ps, rest...) {
		got = append(got, p.Payload()...)
	}
	require.Equal(t, buf, got, "payload")
	d = env.e.Deadline()
	require.True(t, d.IsZero(), "deadline %v after the response", d)
}

func TestResponderReadFinishedBeforeNextRequest(t *testing.T) {
	env := newRC(t)
	n := (readBurst + 1) * rspMTUB
	m, _ := env.region(n, remoteAccess)
	ps := env.deliver(env.req(packet.RCRDMAReadRequest, 100, true, nil, rspRETH(m.IOVA(), m.RKey(), uint32(n))))
	require.Len(t, ps, readBurst, "response packets")
	env.postRecv(1, 8)
	// The SEND's ACK must come after the rest of the READ response, in PSN order.
	next := 100 + uint32(readBurst) + 1
	ps = env.deliver(env.req(packet.RCSendOnly, next, true, nil, nil))
	require.Len(t, ps, 2, "packets")
	rspWantResp(t, ps[0], packet.RCRDMAReadResponseLast, next-1, packet.SyndromeACKUnlimited, 1)
	rspWantResp(t, ps[1], packet.RCAcknowledge, next, packet.SyndromeACKUnlimited, 2)
}

// TestResponderReadRetryRestartsStream: a requester that lost a response of a long READ asks
// again from the lost PSN while the responder is still streaming the original answer. The retry
// replaces the rest of that stream (the requester would discard it), and no call builds more than
// a burst: finishing the original first would put the whole remaining READ into one call's output.
func TestResponderReadRetryRestartsStream(t *testing.T) {
	env := newRC(t)
	n := 3 * readBurst * rspMTUB
	m, buf := env.region(n, remoteAccess)
	copy(buf, rspPattern(n, 3))
	ps := env.deliver(env.req(packet.RCRDMAReadRequest, 100, true, nil, rspRETH(m.IOVA(), m.RKey(), uint32(n))))
	require.Len(t, ps, readBurst, "packets the first call built")
	const lost = 10
	ps = env.deliver(env.req(packet.RCRDMAReadRequest, 100+lost, true, nil,
		rspRETH(m.IOVA()+lost*rspMTUB, m.RKey(), uint32(n-lost*rspMTUB))))
	require.NotEmpty(t, ps, "packets the retry's call built")
	require.LessOrEqual(t, len(ps), readBurst, "packets the retry's call built")
	rspWantResp(t, ps[0], packet.RCRDMAReadResponseFirst, 100+lost, packet.SyndromeACKUnlimited, 1)
	// The retry says responses were lost, so the rest goes out paced (readPacer): each run when
	// the deadline comes.
	for i := 0; env.e.Deadline() != (time.Time{}); i++ {
		require.Less(t, i, 3*readBurst, "response never finishes")
		if d := env.e.Deadline(); d.After(env.now) {
			env.now = d
		}
		more := env.run()
		require.LessOrEqual(t, len(more), readBurst, "packets Run built")
		ps = append(ps, more...)
	}
	require.Len(t, ps, 3*readBurst-lost, "packets after the retry")
	var got []byte
	for i, p := range ps {
		require.Equal(t, packet.PSN(100+lost+i), p.BTH().PSN(), "packet %d PSN", i)
		got = append(got, p.Payload()...)
	}
	require.Equal(t, buf[lost*rspMTUB:], got, "payload")
}

// TestResponderRequestBehindLongRead: a request that arrives while a READ far longer than a burst
// is still being answered may not be answered before the READ (responses go in PSN order), and
// finishing the READ in that call would build it all at once. The responder sends one more burst
// and drops the request, which the requester sends again.
func TestResponderRequestBehindLongRead(t *testing.T) {
	env := newRC(t)
	n := 3 * readBurst * rspMTUB
	m, _ := env.region(n, remoteAccess)
	env.deliver(env.req(packet.RCRDMAReadRequest, 100, true, nil, rspRETH(m.IOVA(), m.RKey(), uint32(n))))
	env.postRecv(1, 8)
	next := 100 + 3*uint32(readBurst)
	send := env.req(packet.RCSendOnly, next, true, []byte("x"), nil)
	ps := env.deliver(send)
	require.Len(t, ps, readBurst, "packets, want one burst")
	require.NotContains(t, rspOpcodes(ps), packet.RCAcknowledge, "request answered before the READ finished")
	require.Empty(t, env.poll(), "request executed")
	ps = env.run()
	rspWantResp(t, ps[len(ps)-1], packet.RCRDMAReadResponseLast, next-1, packet.SyndromeACKUnlimited, 1)
	rspWantAck(t, env.deliver(send), packet.SyndromeACKUnlimited, next, 2)
}

func TestResponderAtomics(t *testing.T) {
	env := newRC(t)
	m, buf := env.region(64, remoteAccess)
	binary.NativeEndian.PutUint64(buf[8:], 10)
	atomic := func(op packet.Opcode, psn uint32, swapAdd, compare uint64) *packet.Parsed {
		return env.req(op, psn, true, nil, func(h *packet.Headers) {
			h.AtomicETH = packet.AtomicETHFields{VirtualAddress: m.IOVA() + 8, RKey: m.RKey(), SwapAddData: swapAdd, CompareData: compare}
		})
	}
	wantAtomicAck := func(ps []*packet.Parsed, psn, msn uint32, orig uint64) {
		t.Helper()
		require.Len(t, rspOpcodes(ps), 1, "want one ATOMIC ACKNOWLEDGE")
		rspWantResp(t, ps[0], packet.RCAtomicAcknowledge, psn, packet.SyndromeACKUnlimited, msn)
		require.Equal(t, orig, ps[0].AtomicAckETH().OriginalRemoteData(), "original value")
	}
	wantAtomicAck(env.deliver(atomic(packet.RCFetchAdd, 100, 5, 0)), 100, 1, 10)
	wantAtomicAck(env.deliver(atomic(packet.RCCompareSwap, 101, 99, 15)), 101, 2, 15)
	wantAtomicAck(env.deliver(atomic(packet.RCCompareSwap, 102, 7, 1)), 102, 3, 99) // no match: unchanged
	require.Equal(t, uint64(99), binary.NativeEndian.Uint64(buf[8:]), "memory")
	// A duplicate of the fetch-and-add returns the recorded value without adding again.
	wantAtomicAck(env.deliver(atomic(packet.RCFetchAdd, 100, 5, 0)), 100, 3, 10)
	require.Equal(t, uint64(99), binary.NativeEndian.Uint64(buf[8:]), "duplicate atomic executed again")
	require.Equal(t, uint64(1), env.e.Counters().Load(counter.DuplicateRequest), "duplicate not counted")
}

func TestResponderAtomicWriteAndFlush(t *testing.T) {
	env := newRC(t)
	m, buf := env.region(64, remoteAccess)
	val := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	ps := env.deliver(env.req(packet.RCAtomicWrite, 100, true, val, rspRETH(m.IOVA()+16, m.RKey(), 8)))
	require.Len(t, ps, 1, "response packets")
	require.Empty(t, ps[0].Payload(), "response payload")
	rspWantResp(t, ps[0], packet.RCRDMAReadResponseOnly, 100, packet.SyndromeACKUnlimited, 1)
	require.Equal(t, val, buf[16:24], "memory")
	flush := func(psn uint32, plt uint8) *packet.Parsed {
		return env.req(packet.RCFlush, psn, true, nil, func(h *packet.Headers) {
			h.FETH = packet.FETHFields{PlacementType: plt, Selectivity: packet.FlushMemoryRange}
			h.RETH = packet.RETHFields{VirtualAddress: m.IOVA(), RKey: m.RKey(), DMALength: 64}
		})
	}
	ps = env.deliver(flush(101, packet.FlushGlobalVisibility))
	require.Len(t, ps, 1, "response packets")
	rspWantResp(t, ps[0], packet.RCRDMAReadResponseOnly, 101, packet.SyndromeACKUnlimited, 2)

	// Duplicates are answered again from the resources without executing.
	copy(buf[16:24], "xxxxxxxx")
	ps = env.deliver(env.req(packet.RCAtomicWrite, 100, true, val, rspRETH(m.IOVA()+16, m.RKey(), 8)))
	rspWantResp(t, ps[0], packet.RCRDMAReadResponseOnly, 100, packet.SyndromeACKUnlimited, 2)
	require.Equal(t, "xxxxxxxx", string(buf[16:24]), "duplicate ATOMIC_WRITE executed again")
	ps = env.deliver(flush(101, packet.FlushGlobalVisibility))
	rspWantResp(t, ps[0], packet.RCRDMAReadResponseOnly, 101, packet.SyndromeACKUnlimited, 2)

	// The QP grants persistent flushes but the region does not: a remote access error.
	ps = env.deliver(flush(102, packet.FlushPersistence))
	rspWantAck(t, ps, packet.SyndromeNAKRemoteAccessError, 102, 2)
	rspWantState(t, env.q, qp.StateErr)
}
