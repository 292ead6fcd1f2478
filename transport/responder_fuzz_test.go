package transport

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

// fuzzStates are the QP states FuzzResponder puts its QP in before the packets arrive.
var fuzzStates = [...]qp.State{qp.StateReset, qp.StateInit, qp.StateRTR, qp.StateRTS, qp.StateSQD, qp.StateSQE, qp.StateErr}

// fuzzFrame encodes the input of FuzzResponder: each packet behind a 2-byte length; a zero length
// followed by one byte n lets n milliseconds pass and calls Run.
func fuzzFrame(f *testing.F, items ...any) []byte {
	var b []byte
	for _, it := range items {
		switch it := it.(type) {
		case time.Duration:
			b = append(b, 0, 0, byte(it/time.Millisecond))
		case *packet.Headers:
			p, err := packet.AppendPacket(nil, it, nil)
			require.NoError(f, err)
			b = binary.BigEndian.AppendUint16(b, uint16(len(p)))
			b = append(b, p...)
		case []byte: // a packet already encoded
			b = binary.BigEndian.AppendUint16(b, uint16(len(it)))
			b = append(b, it...)
		}
	}
	return b
}

// FuzzResponder feeds a sequence of arbitrary packets, requests and responses alike, and clock
// jumps to an RC, UC or UD QP in any state, with memory registered, receives posted and (RC, UC)
// sends, an RDMA READ and an atomic outstanding. Whatever arrives, the engine must not panic,
// must emit only packets that parse with a correct ICRC (rspEnv.collect checks), must not write
// outside the buffers it was given (the guard bytes around them stay zero), must keep its PSNs and
// counts consistent, and must come to rest: once its deadlines have run out, nothing it started
// may be left waiting for an event that never comes.
func FuzzResponder(f *testing.F) {
	pkt := func(h *packet.Headers, payload []byte) []byte {
		b, err := packet.AppendPacket(nil, h, payload)
		require.NoError(f, err)
		return b
	}
	bth := func(op packet.Opcode, psn uint32) packet.BTHFields {
		return packet.BTHFields{Opcode: op, PKey: 0xFFFF, AckReq: true, PSN: packet.PSN(psn)}
	}
	rts, sqd, rtr := uint8(3), uint8(4), uint8(2)
	reth := packet.RETHFields{VirtualAddress: 0x1000, RKey: 0x100, DMALength: 4}
	f.Add(uint8(0), rts, fuzzFrame(f, pkt(&packet.Headers{BTH: bth(packet.RCSendOnly, 0)}, []byte("hello"))))
	f.Add(uint8(0), rts, fuzzFrame(f, pkt(&packet.Headers{BTH: bth(packet.RCRDMAWriteOnly, 0), RETH: reth}, []byte("abcd"))))
	f.Add(uint8(0), rts, fuzzFrame(f, &packet.Headers{BTH: bth(packet.RCRDMAReadRequest, 0),
		RETH: packet.RETHFields{VirtualAddress: 0x1000, RKey: 0x100, DMALength: 600}}, time.Duration(0)))
	f.Add(uint8(0), rtr, fuzzFrame(f, &packet.Headers{BTH: bth(packet.RCFetchAdd, 0),
		AtomicETH: packet.AtomicETHFields{VirtualAddress: 0x1000, RKey: 0x100, SwapAddData: 1}}))
	f.Add(uint8(0), rts, fuzzFrame(f, pkt(&packet.Headers{BTH: bth(packet.RCSendFirst, 0)}, make([]byte, rspMTUB)),
		pkt(&packet.Headers{BTH: bth(packet.RCSendLast, 1)}, []byte("tail"))))
	// Responses to the requester's outstanding work (first PSN 0x777: SEND of 3 packets, READ of
	// 3 packets, FETCH_ADD).
	ack := func(op packet.Opcode, psn uint32, syn packet.Syndrome) *packet.Headers {
		return &packet.Headers{BTH: bth(op, psn), AETH: packet.AETHFields{Syndrome: syn, MSN: 1}}
	}
	f.Add(uint8(0), rts, fuzzFrame(f, ack(packet.RCAcknowledge, 0x779, packet.SyndromeACKUnlimited),
		pkt(ack(packet.RCRDMAReadResponseFirst, 0x77a, packet.SyndromeACKUnlimited), make([]byte, rspMTUB)),
		pkt(&packet.Headers{BTH: bth(packet.RCRDMAReadResponseMiddle, 0x77b)}, make([]byte, rspMTUB)),
		pkt(ack(packet.RCRDMAReadResponseLast, 0x77c, packet.SyndromeACKUnlimited), make([]byte, 88)),
		ack(packet.RCAtomicAcknowledge, 0x77d, packet.SyndromeACKUnlimited)))
	f.Add(uint8(0), sqd, fuzzFrame(f, ack(packet.RCAcknowledge, 0x778, packet.SyndromeRNRNAK(3)), time.Duration(1),
		ack(packet.RCAcknowledge, 0x77a, packet.SyndromeNAKPSNSequenceError), time.Duration(200)))
	f.Add(uint8(1), rts, fuzzFrame(f, pkt(&packet.Headers{BTH: bth(packet.UCSendOnlyWithImmediate, 0)}, []byte("uc"))))
	f.Add(uint8(2), rts, fuzzFrame(f, pkt(&packet.Headers{BTH: bth(packet.UDSendOnly, 0),
		DETH: packet.DETHFields{QKey: udQKey, SrcQP: 5}}, []byte("ud"))))

	f.Fuzz(func(t *testing.T, typ, state uint8, data []byte) {
		types := [...]qp.Type{qp.TypeRC, qp.TypeUC, qp.TypeUD}
		fuzzEngine(t, types[int(typ)%len(types)], fuzzStates[int(state)%len(fuzzStates)], data)
	})
}

func fuzzEngine(t *testing.T, typ qp.Type, state qp.State, data []byte) {
	env := newRspEnv(t, rspOptions{typ: typ, access: rcAccess, maxDestRd: 2})
	// Regions with guard bytes on both sides: one whose IOVA the seeds name, the receive buffer,
	// and the requester's source and READ/atomic destination.
	const guard = 64
	guarded := func(n int) ([]byte, []byte) {
		b := make([]byte, 2*guard+n)
		return b, b[guard : guard+n]
	}
	target, tmem := guarded(4096)
	_, err := env.mem.RegMRIOVA(env.pd, tmem, 0x1000, remoteAccess)
	require.NoError(t, err)
	recv, rmem := guarded(1024)
	rm, err := env.mem.RegMR(env.pd, rmem, mr.AccessLocalWrite)
	require.NoError(t, err)
	local, lmem := guarded(2048)
	lm, err := env.mem.RegMR(env.pd, lmem, mr.AccessLocalWrite)
	require.NoError(t, err)
	for id := range uint64(2) {
		require.NoError(t, env.q.PostRecv([]qp.RecvWR{{ID: id, SGList: []mr.SGE{{Addr: rm.IOVA() + id*512, Length: 512, LKey: rm.LKey()}}}}))
	}
	sge := func(off, n uint64) []mr.SGE {
		return []mr.SGE{{Addr: lm.IOVA() + off, Length: uint32(n), LKey: lm.LKey()}}
	}
	rdma := qp.RDMAInfo{RemoteAddr: 0x1000, RKey: 0x100}
	switch typ {
	case qp.TypeRC:
		require.NoError(t, postSend(env.q, []qp.SendWR{
			{ID: 1, Opcode: qp.WRSend, Flags: qp.SendSignaled, SGList: sge(0, 600)},
			{ID: 2, Opcode: qp.WRRDMARead, Flags: qp.SendSignaled, SGList: sge(1024, 600), RDMA: rdma},
			{ID: 3, Opcode: qp.WRAtomicFetchAndAdd, Flags: qp.SendSignaled, SGList: sge(2040, 8), Atomic: qp.AtomicInfo{RKey: 0x100}},
		}))
	case qp.TypeUC:
		require.NoError(t, postSend(env.q, []qp.SendWR{
			{ID: 1, Opcode: qp.WRSend, Flags: qp.SendSignaled, SGList: sge(0, 600)},
			{ID: 2, Opcode: qp.WRRDMAWrite, SGList: sge(0, 10), RDMA: rdma},
		}))
	}
	env.run()
	fuzzToState(t, env, state)
	env.run()

	maxRd := 4 // the initiator depth newRspEnv gives
	check := func() {
		t.Helper()
		c, r := &env.e.comp, &env.e.req
		if r.canSend() {
			require.False(t, r.tip.LessThan(c.psn) || r.psn.LessThan(c.psn) || r.tip.LessThan(r.psn),
				"PSNs out of order: acknowledged %#x, next %#x, tip %#x", uint32(c.psn), uint32(r.psn), uint32(r.tip))
		}
		require.GreaterOrEqual(t, r.rdAtomic, 0, "initiator depth count")
		require.LessOrEqual(t, r.rdAtomic, maxRd, "initiator depth count")
		rs := &env.e.resp
		require.False(t, rs.read.active && !rs.started, "READ response active on a stopped responder")
	}
	for len(data) >= 2 {
		n := int(binary.BigEndian.Uint16(data))
		data = data[2:]
		if n == 0 {
			if len(data) > 0 {
				env.now = env.now.Add(time.Duration(data[0]) * time.Millisecond)
				data = data[1:]
			}
			env.run()
			check()
			continue
		}
		n = min(n, len(data))
		var p packet.Parsed
		if packet.Parse(data[:n], &p) == nil {
			env.deliver(&p)
			check()
		}
		data = data[n:]
	}
	// Let the timers run out: retransmissions end in success or retry exhaustion, READ responses
	// finish. An engine whose deadline never stops coming is stuck.
	for i := 0; ; i++ {
		dl := env.e.Deadline()
		if dl.IsZero() {
			break
		}
		require.Less(t, i, 10_000, "engine still has a deadline after that many runs")
		if dl.After(env.now) {
			env.now = dl
		}
		env.run()
		check()
	}
	// At rest, a QP that can send has nothing started and unfinished: it would wait forever.
	head, cursor, tail := env.q.SendQueue().Positions()
	switch env.q.State() {
	case qp.StateRTS:
		require.Equal(t, tail, head, "RTS at rest with WQEs outstanding: head behind tail (cursor %d)", cursor)
	case qp.StateSQD:
		require.Equal(t, cursor, head, "SQD at rest with started WQEs outstanding: head behind cursor")
	}
	for _, b := range [][]byte{target, recv, local} {
		for _, c := range [][]byte{b[:guard], b[len(b)-guard:]} {
			require.Equal(t, make([]byte, guard), c, "engine wrote outside registered memory")
		}
	}
}

// fuzzToState moves the QP of env, in RTS, to s.
func fuzzToState(t *testing.T, env *rspEnv, s qp.State) {
	q := env.q
	switch s {
	case qp.StateReset, qp.StateInit:
		require.NoError(t, q.Modify(&qp.Attr{State: qp.StateReset}, qp.AttrState))
		if s == qp.StateInit {
			a := &qp.Attr{State: qp.StateInit, PortNum: 1, AccessFlags: rcAccess, QKey: udQKey}
			mask := qp.AttrState | qp.AttrPKeyIndex | qp.AttrPort
			if q.Type() == qp.TypeUD {
				mask |= qp.AttrQKey
			} else {
				mask |= qp.AttrAccessFlags
			}
			require.NoError(t, q.Modify(a, mask))
		}
	case qp.StateRTR:
		// Back to RTR means a new connection: through RESET with the same attributes.
		a, _ := q.Query()
		fuzzToState(t, env, qp.StateInit)
		a.State = qp.StateRTR
		mask := qp.AttrState
		if q.Type() != qp.TypeUD {
			mask |= qp.AttrAV | qp.AttrPathMTU | qp.AttrDestQPN | qp.AttrRQPSN
			if q.Type() == qp.TypeRC {
				mask |= qp.AttrMaxDestRdAtomic | qp.AttrMinRNRTimer
			}
		}
		require.NoError(t, q.Modify(&a, mask))
	case qp.StateSQD:
		require.NoError(t, q.Modify(&qp.Attr{State: qp.StateSQD}, qp.AttrState))
	case qp.StateSQE:
		q.EnterSQError() // RC has no SQE and goes to ERR
	case qp.StateErr:
		q.EnterError()
	}
}
