package transport

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

func TestResponderOutOfSequenceNAKsOnce(t *testing.T) {
	env := newRC(t)
	env.postRecv(1, 64)
	env.postRecv(2, 64)
	// PSN 100 was lost: the first later packet is NAKed with the expected PSN, the next dropped.
	rspWantAck(t, env.deliver(env.req(packet.RCSendOnly, 101, true, nil, nil)), packet.SyndromeNAKPSNSequenceError, 100, 0)
	rspWantNone(t, env.deliver(env.req(packet.RCSendOnly, 102, true, nil, nil)))
	require.Equal(t, uint64(1), env.e.Counters().Load(counter.OutOfSeqRequest), "out_of_seq_request")
	// Recovery: the retransmission is accepted; a later gap is NAKed again.
	rspWantAck(t, env.deliver(env.req(packet.RCSendOnly, 100, true, nil, nil)), packet.SyndromeACKUnlimited, 100, 1)
	rspWantAck(t, env.deliver(env.req(packet.RCSendOnly, 105, true, nil, nil)), packet.SyndromeNAKPSNSequenceError, 101, 1)
	wcs := env.poll()
	require.Len(t, wcs, 1, "completions")
	require.Equal(t, uint64(1), wcs[0].WRID, "completion wr_id")
	rspWantState(t, env.q, qp.StateRTS)
}

func TestResponderDuplicateSendReAcks(t *testing.T) {
	env := newRC(t)
	env.postRecv(1, 64)
	env.postRecv(2, 64)
	rspWantAck(t, env.deliver(env.req(packet.RCSendOnly, 100, true, []byte("a"), nil)), packet.SyndromeACKUnlimited, 100, 1)
	rspWantNone(t, env.deliver(env.req(packet.RCSendOnly, 101, false, []byte("b"), nil)))
	// The ACK of 100 was lost and the requester resends it: acknowledge up to 101 (C9-105), do not
	// deliver the message a second time.
	rspWantAck(t, env.deliver(env.req(packet.RCSendOnly, 100, true, []byte("a"), nil)), packet.SyndromeACKUnlimited, 101, 2)
	require.Len(t, env.poll(), 2, "completions")
	require.Equal(t, uint64(1), env.e.Counters().Load(counter.DuplicateRequest), "duplicate not counted")
}

func TestResponderDuplicateReadReplays(t *testing.T) {
	env := newRC(t)
	m, buf := env.region(4096, remoteAccess)
	copy(buf, rspPattern(4096, 21))
	const n = 3 * rspMTUB
	ps := env.deliver(env.req(packet.RCRDMAReadRequest, 100, true, nil, rspRETH(m.IOVA(), m.RKey(), n)))
	require.Len(t, ps, 3, "response packets")
	env.postRecv(1, 8)
	rspWantAck(t, env.deliver(env.req(packet.RCSendOnly, 103, true, nil, nil)), packet.SyndromeACKUnlimited, 103, 2)

	// The last two responses were lost: the requester asks again from PSN 101 for the tail.
	ps = env.deliver(env.req(packet.RCRDMAReadRequest, 101, true, nil, rspRETH(m.IOVA()+rspMTUB, m.RKey(), 2*rspMTUB)))
	require.Len(t, ps, 2, "packets the replay built")
	rspWantResp(t, ps[0], packet.RCRDMAReadResponseFirst, 101, packet.SyndromeACKUnlimited, 2)
	rspWantResp(t, ps[1], packet.RCRDMAReadResponseLast, 102, packet.SyndromeACKUnlimited, 2)
	require.Equal(t, buf[rspMTUB:3*rspMTUB], append(ps[0].Payload(), ps[1].Payload()...), "replayed payload")
	// The whole request again, from its first PSN, once the pace the replay set allows
	// (readPacer: the requester lost responses).
	env.now = env.now.Add(readPaceMaxInterval)
	ps = env.deliver(env.req(packet.RCRDMAReadRequest, 100, true, nil, rspRETH(m.IOVA(), m.RKey(), n)))
	require.Len(t, ps, 3, "response packets")

	// Not a subset of the original (other key, range beyond it, or more PSNs): dropped, class D.
	for _, bad := range []func(*packet.Headers){
		rspRETH(m.IOVA()+rspMTUB, m.RKey()+1, rspMTUB),
		rspRETH(m.IOVA()+rspMTUB, m.RKey(), 3*rspMTUB),
		rspRETH(m.IOVA()-8, m.RKey(), rspMTUB),
	} {
		rspWantNone(t, env.deliver(env.req(packet.RCRDMAReadRequest, 101, true, nil, bad)))
	}
	// A READ duplicate at a PSN no READ used (99 predates the connection) is dropped.
	rspWantNone(t, env.deliver(env.req(packet.RCRDMAReadRequest, 99, true, nil, rspRETH(m.IOVA(), m.RKey(), 8))))
	rspWantState(t, env.q, qp.StateRTS)

	// The region is gone by the time of a replay: the re-validation fails with a remote access error.
	require.NoError(t, m.DeregMR())
	env.now = env.now.Add(readPaceMaxInterval)
	rspWantAck(t, env.deliver(env.req(packet.RCRDMAReadRequest, 100, true, nil, rspRETH(m.IOVA(), m.RKey(), n))),
		packet.SyndromeNAKRemoteAccessError, 100, 2)
	rspWantState(t, env.q, qp.StateErr)
}

func TestResponderResourcesRing(t *testing.T) {
	env := newRspEnv(t, rspOptions{access: rcAccess, rqPSN: 100, maxDestRd: 2})
	m, _ := env.region(64, remoteAccess)
	fa := func(psn uint32) *packet.Parsed {
		return env.req(packet.RCFetchAdd, psn, true, nil, func(h *packet.Headers) {
			h.AtomicETH = packet.AtomicETHFields{VirtualAddress: m.IOVA(), RKey: m.RKey(), SwapAddData: 1}
		})
	}
	for psn := uint32(100); psn < 103; psn++ {
		env.deliver(fa(psn))
	}
	// Two resources: 100 was overwritten by 102 and is no longer answered; 101 and 102 are.
	rspWantNone(t, env.deliver(fa(100)))
	for psn, orig := range map[uint32]uint64{101: 1, 102: 2} {
		ps := env.deliver(fa(psn))
		require.Len(t, ps, 1, "duplicate %d not answered", psn)
		require.Equal(t, orig, ps[0].AtomicAckETH().OriginalRemoteData(), "duplicate %d: original value", psn)
	}
}

func TestResponderRNR(t *testing.T) {
	env := newRC(t)
	// No receive WQE: RNR NAK with the QP's timer and the request's PSN, nothing else changes.
	rspWantAck(t, env.deliver(env.req(packet.RCSendFirst, 100, false, rspPattern(rspMTUB, 1), nil)),
		packet.SyndromeRNRNAK(rspRNRCode), 100, 0)
	rspWantState(t, env.q, qp.StateRTS)
	require.Equal(t, uint64(1), env.e.Counters().Load(counter.SendRNRErr), "send_rnr_err")
	// After a receive is posted the retransmission succeeds.
	bufs := env.postRecv(5, 512)
	rspWantNone(t, env.deliver(env.req(packet.RCSendFirst, 100, false, rspPattern(rspMTUB, 1), nil)))
	rspWantAck(t, env.deliver(env.req(packet.RCSendLast, 101, true, []byte("end"), nil)), packet.SyndromeACKUnlimited, 101, 1)
	require.Equal(t, rspPattern(rspMTUB, 1), bufs[0][:rspMTUB], "data")
	require.Equal(t, "end", string(bufs[0][rspMTUB:rspMTUB+3]), "data")
	wcs := env.poll()
	require.Len(t, wcs, 1, "completions")
	require.Equal(t, uint64(5), wcs[0].WRID, "completion wr_id")
	require.Equal(t, uint32(rspMTUB+3), wcs[0].ByteLen, "completion byte_len")

	// WRITE_LAST_WITH_IMM without a WQE: the earlier packets stay placed, the last one is NAKed
	// and accepted once a WQE exists.
	m, buf := env.region(1024, remoteAccess)
	msg := rspPattern(rspMTUB+4, 7)
	env.deliver(env.req(packet.RCRDMAWriteFirst, 102, false, msg[:rspMTUB], rspRETH(m.IOVA(), m.RKey(), uint32(len(msg)))))
	last := env.req(packet.RCRDMAWriteLastWithImmediate, 103, true, msg[rspMTUB:], nil)
	rspWantAck(t, env.deliver(last), packet.SyndromeRNRNAK(rspRNRCode), 103, 1)
	env.postRecv(6, 8)
	rspWantAck(t, env.deliver(last), packet.SyndromeACKUnlimited, 103, 2)
	require.Equal(t, msg, buf[:len(msg)], "write data")
}

func TestResponderSRQ(t *testing.T) {
	env := newRspEnv(t, rspOptions{access: rcAccess, maxDestRd: 1, srq: true})
	rspWantAck(t, env.deliver(env.req(packet.RCSendOnly, 0, true, []byte("x"), nil)), packet.SyndromeRNRNAK(rspRNRCode), 0, 0)
	bufs := env.postRecv(11, 8)
	rspWantAck(t, env.deliver(env.req(packet.RCSendOnly, 0, true, []byte("x"), nil)), packet.SyndromeACKUnlimited, 0, 1)
	require.Equal(t, byte('x'), bufs[0][0], "data")
	wcs := env.poll()
	require.Len(t, wcs, 1, "completions")
	require.Equal(t, uint64(11), wcs[0].WRID, "completion wr_id")
	require.Equal(t, env.q.QPN(), wcs[0].QPNum, "completion qp_num")
}

// TestResponderSRQLastWQEAfterFlush: a QP on an SRQ that enters ERR in the middle of a SEND holds
// a WQE it took from the SRQ. IBV_EVENT_QP_LAST_WQE_REACHED tells the consumer it may tear the QP
// down, so it must come after that WQE's flush completion, not before.
func TestResponderSRQLastWQEAfterFlush(t *testing.T) {
	env := newRspEnv(t, rspOptions{access: rcAccess, maxDestRd: 1, srq: true})
	env.postRecv(1, 1024)
	env.postRecv(2, 1024)
	rspWantNone(t, env.deliver(env.req(packet.RCSendFirst, 0, false, rspPattern(rspMTUB, 1), nil)))
	require.NoError(t, env.q.Modify(&qp.Attr{State: qp.StateErr}, qp.AttrState))
	env.run()
	wcs := env.poll()
	require.Len(t, wcs, 1, "completions")
	require.Equal(t, uint64(1), wcs[0].WRID, "completion wr_id")
	require.Equal(t, cq.WCWRFlushErr, wcs[0].Status, "completion status")
	var last []rspEvent
	for _, e := range env.events {
		if e.typ == qp.EventQPLastWQEReached {
			last = append(last, e)
		}
	}
	require.Equal(t, []rspEvent{{typ: qp.EventQPLastWQEReached, recvWCs: 1}}, last,
		"LAST_WQE_REACHED events, want one raised after the flush completion")
	require.Equal(t, 1, env.q.SRQ().Len(), "the SRQ's other WQE was consumed")
}

func TestResponderPSNWrap(t *testing.T) {
	env := newRspEnv(t, rspOptions{access: rcAccess, rqPSN: 0xFFFFFE, maxDestRd: 4})
	bufs := env.postRecv(1, 1024)
	msg := rspPattern(2*rspMTUB+1, 2)
	env.deliver(env.req(packet.RCSendFirst, 0xFFFFFE, false, msg[:rspMTUB], nil))
	env.deliver(env.req(packet.RCSendMiddle, 0xFFFFFF, false, msg[rspMTUB:2*rspMTUB], nil))
	rspWantAck(t, env.deliver(env.req(packet.RCSendLast, 0, true, msg[2*rspMTUB:], nil)), packet.SyndromeACKUnlimited, 0, 1)
	require.Equal(t, msg, bufs[0][:len(msg)], "data")
	// A duplicate from before the wrap is a duplicate, not a future PSN.
	rspWantAck(t, env.deliver(env.req(packet.RCSendMiddle, 0xFFFFFF, true, msg[:rspMTUB], nil)), packet.SyndromeACKUnlimited, 0, 1)

	// A READ whose responses wrap, and its replay across the wrap.
	env2 := newRspEnv(t, rspOptions{access: rcAccess, rqPSN: 0xFFFFFF, maxDestRd: 4})
	m, _ := env2.region(1024, remoteAccess)
	ps := env2.deliver(env2.req(packet.RCRDMAReadRequest, 0xFFFFFF, true, nil, rspRETH(m.IOVA(), m.RKey(), 3*rspMTUB)))
	require.Len(t, ps, 3, "read response packets")
	require.Equal(t, []packet.PSN{0xFFFFFF, 0, 1}, []packet.PSN{ps[0].BTH().PSN(), ps[1].BTH().PSN(), ps[2].BTH().PSN()},
		"read response PSNs do not wrap")
	ps = env2.deliver(env2.req(packet.RCRDMAReadRequest, 0, true, nil, rspRETH(m.IOVA()+rspMTUB, m.RKey(), 2*rspMTUB)))
	require.Len(t, ps, 2, "replay across the wrap: packets")
	require.Equal(t, packet.PSN(0), ps[0].BTH().PSN(), "replay across the wrap: first PSN")
	env2.postRecv(1, 8)
	rspWantAck(t, env2.deliver(env2.req(packet.RCSendOnly, 2, true, nil, nil)), packet.SyndromeACKUnlimited, 2, 2)
}

// TestResponderClassCErrors provokes every fatal RC error: each is NAKed with its syndrome and
// the request's PSN, moves the QP to ERR, and leaves memory untouched.
func TestResponderClassCErrors(t *testing.T) {
	type setup struct {
		env *rspEnv
		m   *mr.MR
		buf []byte
	}
	full := func(t *testing.T) *rspEnv { return newRC(t) }
	tests := []struct {
		name   string
		env    func(t *testing.T) *rspEnv
		region mr.Access
		pkts   func(s *setup) []*packet.Parsed // all but the last are accepted silently
		syn    packet.Syndrome
	}{
		{"write bad rkey", full, remoteAccess, func(s *setup) []*packet.Parsed {
			return []*packet.Parsed{s.env.req(packet.RCRDMAWriteOnly, 100, true, []byte("x"), rspRETH(s.m.IOVA(), s.m.RKey()+1, 1))}
		}, packet.SyndromeNAKRemoteAccessError},
		{"write beyond region", full, remoteAccess, func(s *setup) []*packet.Parsed {
			return []*packet.Parsed{s.env.req(packet.RCRDMAWriteFirst, 100, false, rspPattern(rspMTUB, 1), rspRETH(s.m.IOVA(), s.m.RKey(), 4097))}
		}, packet.SyndromeNAKRemoteAccessError},
		{"write without region access", full, mr.AccessLocalWrite | mr.AccessRemoteRead, func(s *setup) []*packet.Parsed {
			return []*packet.Parsed{s.env.req(packet.RCRDMAWriteOnly, 100, true, []byte("x"), rspRETH(s.m.IOVA(), s.m.RKey(), 1))}
		}, packet.SyndromeNAKRemoteAccessError},
		{"read bad range", full, remoteAccess, func(s *setup) []*packet.Parsed {
			return []*packet.Parsed{s.env.req(packet.RCRDMAReadRequest, 100, true, nil, rspRETH(s.m.IOVA()+4000, s.m.RKey(), 100))}
		}, packet.SyndromeNAKRemoteAccessError},
		{"atomic bad rkey", full, remoteAccess, func(s *setup) []*packet.Parsed {
			return []*packet.Parsed{s.env.req(packet.RCFetchAdd, 100, true, nil, func(h *packet.Headers) {
				h.AtomicETH = packet.AtomicETHFields{VirtualAddress: s.m.IOVA(), RKey: 0x5555, SwapAddData: 1}
			})}
		}, packet.SyndromeNAKRemoteAccessError},
		{"atomic misaligned", full, remoteAccess, func(s *setup) []*packet.Parsed {
			return []*packet.Parsed{s.env.req(packet.RCCompareSwap, 100, true, nil, func(h *packet.Headers) {
				h.AtomicETH = packet.AtomicETHFields{VirtualAddress: s.m.IOVA() + 4, RKey: s.m.RKey(), SwapAddData: 1}
			})}
		}, packet.SyndromeNAKInvalidRequest},
		{"atomic write misaligned", full, remoteAccess, func(s *setup) []*packet.Parsed {
			return []*packet.Parsed{s.env.req(packet.RCAtomicWrite, 100, true, rspPattern(8, 1), rspRETH(s.m.IOVA()+1, s.m.RKey(), 8))}
		}, packet.SyndromeNAKInvalidRequest},
		{"middle without first", full, remoteAccess, func(s *setup) []*packet.Parsed {
			return []*packet.Parsed{s.env.req(packet.RCSendMiddle, 100, true, rspPattern(rspMTUB, 1), nil)}
		}, packet.SyndromeNAKInvalidRequest},
		{"write last inside a send", full, remoteAccess, func(s *setup) []*packet.Parsed {
			s.env.postRecv(1, 1024)
			return []*packet.Parsed{
				s.env.req(packet.RCSendFirst, 100, false, rspPattern(rspMTUB, 1), nil),
				s.env.req(packet.RCRDMAWriteLast, 101, true, rspPattern(4, 1), nil),
			}
		}, packet.SyndromeNAKInvalidRequest},
		{"first without last", full, remoteAccess, func(s *setup) []*packet.Parsed {
			s.env.postRecv(1, 1024)
			s.env.postRecv(2, 1024)
			return []*packet.Parsed{
				s.env.req(packet.RCSendFirst, 100, false, rspPattern(rspMTUB, 1), nil),
				s.env.req(packet.RCSendOnly, 101, true, rspPattern(4, 1), nil),
			}
		}, packet.SyndromeNAKInvalidRequest},
		{"first shorter than MTU", full, remoteAccess, func(s *setup) []*packet.Parsed {
			s.env.postRecv(1, 1024)
			return []*packet.Parsed{s.env.req(packet.RCSendFirst, 100, false, rspPattern(rspMTUB-4, 1), nil)}
		}, packet.SyndromeNAKInvalidRequest},
		{"last empty", full, remoteAccess, func(s *setup) []*packet.Parsed {
			s.env.postRecv(1, 1024)
			return []*packet.Parsed{
				s.env.req(packet.RCSendFirst, 100, false, rspPattern(rspMTUB, 1), nil),
				s.env.req(packet.RCSendLast, 101, true, nil, nil),
			}
		}, packet.SyndromeNAKInvalidRequest},
		{"only longer than MTU", full, remoteAccess, func(s *setup) []*packet.Parsed {
			return []*packet.Parsed{s.env.req(packet.RCRDMAWriteOnly, 100, true, rspPattern(rspMTUB+4, 1), rspRETH(s.m.IOVA(), s.m.RKey(), rspMTUB+4))}
		}, packet.SyndromeNAKInvalidRequest},
		{"write longer than its RETH", full, remoteAccess, func(s *setup) []*packet.Parsed {
			return []*packet.Parsed{
				s.env.req(packet.RCRDMAWriteFirst, 100, false, rspPattern(rspMTUB, 1), rspRETH(s.m.IOVA(), s.m.RKey(), rspMTUB+8)),
				s.env.req(packet.RCRDMAWriteLast, 101, true, rspPattern(12, 1), nil),
			}
		}, packet.SyndromeNAKInvalidRequest},
		{"RETH length above 2^31", full, remoteAccess, func(s *setup) []*packet.Parsed {
			return []*packet.Parsed{s.env.req(packet.RCRDMAReadRequest, 100, true, nil, rspRETH(s.m.IOVA(), s.m.RKey(), 1<<31+1))}
		}, packet.SyndromeNAKInvalidRequest},
		{"read without responder resources", func(t *testing.T) *rspEnv {
			return newRspEnv(t, rspOptions{access: rcAccess, rqPSN: 100})
		}, remoteAccess, func(s *setup) []*packet.Parsed {
			return []*packet.Parsed{s.env.req(packet.RCRDMAReadRequest, 100, true, nil, rspRETH(s.m.IOVA(), s.m.RKey(), 8))}
		}, packet.SyndromeNAKInvalidRequest},
		{"write on a QP without remote write", func(t *testing.T) *rspEnv {
			return newRspEnv(t, rspOptions{access: mr.AccessRemoteRead, rqPSN: 100, maxDestRd: 1})
		}, remoteAccess, func(s *setup) []*packet.Parsed {
			return []*packet.Parsed{s.env.req(packet.RCRDMAWriteOnly, 100, true, []byte("x"), rspRETH(s.m.IOVA(), s.m.RKey(), 1))}
		}, packet.SyndromeNAKInvalidRequest},
		{"read on a QP without remote read", func(t *testing.T) *rspEnv {
			return newRspEnv(t, rspOptions{access: mr.AccessRemoteWrite, rqPSN: 100, maxDestRd: 1})
		}, remoteAccess, func(s *setup) []*packet.Parsed {
			return []*packet.Parsed{s.env.req(packet.RCRDMAReadRequest, 100, true, nil, rspRETH(s.m.IOVA(), s.m.RKey(), 8))}
		}, packet.SyndromeNAKInvalidRequest},
		{"atomic on a QP without remote atomic", func(t *testing.T) *rspEnv {
			return newRspEnv(t, rspOptions{access: mr.AccessRemoteWrite, rqPSN: 100, maxDestRd: 1})
		}, remoteAccess, func(s *setup) []*packet.Parsed {
			return []*packet.Parsed{s.env.req(packet.RCFetchAdd, 100, true, nil, func(h *packet.Headers) {
				h.AtomicETH = packet.AtomicETHFields{VirtualAddress: s.m.IOVA(), RKey: s.m.RKey(), SwapAddData: 1}
			})}
		}, packet.SyndromeNAKInvalidRequest},
		{"flush on a QP without flush access", func(t *testing.T) *rspEnv {
			return newRspEnv(t, rspOptions{access: mr.AccessRemoteWrite | mr.AccessFlushGlobal, rqPSN: 100, maxDestRd: 1})
		}, remoteAccess | mr.AccessFlushPersistent, func(s *setup) []*packet.Parsed {
			return []*packet.Parsed{s.env.req(packet.RCFlush, 100, true, nil, func(h *packet.Headers) {
				h.FETH = packet.FETHFields{PlacementType: packet.FlushPersistence}
				h.RETH = packet.RETHFields{VirtualAddress: s.m.IOVA(), RKey: s.m.RKey(), DMALength: 8}
			})}
		}, packet.SyndromeNAKInvalidRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &setup{env: tc.env(t)}
			s.m, s.buf = s.env.region(4096, tc.region)
			pkts := tc.pkts(s)
			for _, p := range pkts[:len(pkts)-1] {
				rspWantNone(t, s.env.deliver(p))
			}
			last := pkts[len(pkts)-1]
			rspWantAck(t, s.env.deliver(last), tc.syn, uint32(last.BTH().PSN()), 0)
			rspWantState(t, s.env.q, qp.StateErr)
			// Each refusal is counted under its NAK, so an attack leaves a trace.
			ctr := s.env.e.Counters()
			wantAccess, wantInvReq := uint64(0), uint64(0)
			if tc.syn == packet.SyndromeNAKRemoteAccessError {
				wantAccess = 1
			} else {
				wantInvReq = 1
			}
			assert.Equal(t, wantAccess, ctr.Load(counter.SentAccessNAK), "sent_access_nak")
			assert.Equal(t, wantInvReq, ctr.Load(counter.SentInvReqNAK), "sent_inv_req_nak")
			if len(pkts) == 1 {
				require.Equal(t, make([]byte, 4096), s.buf, "a failed request changed memory")
			}
			// A receive WQE the failed message held completes in error before the flushes.
			if wcs := s.env.poll(); len(wcs) > 0 {
				require.Contains(t, []cq.Status{cq.WCRemInvReqErr, cq.WCWRFlushErr}, wcs[0].Status, "first completion")
			}
			// Nothing is answered any more.
			rspWantNone(t, s.env.deliver(last))
			require.Equal(t, uint64(1), s.env.e.Counters().Load(counter.RcvdWrongState), "packet in ERR not counted")
		})
	}
}

func TestResponderTooLongSend(t *testing.T) {
	env := newRC(t)
	env.postRecv(1, 100)
	env.postRecv(2, 100)
	rspWantAck(t, env.deliver(env.req(packet.RCSendOnly, 100, true, rspPattern(101, 1), nil)),
		packet.SyndromeNAKInvalidRequest, 100, 0)
	rspWantState(t, env.q, qp.StateErr)
	wcs := env.poll()
	require.Len(t, wcs, 2, "completions")
	require.Equal(t, uint64(1), wcs[0].WRID, "first completion wr_id")
	require.Equal(t, cq.WCLocLenErr, wcs[0].Status, "first completion status")
	require.Equal(t, uint64(2), wcs[1].WRID, "second completion wr_id")
	require.Equal(t, cq.WCWRFlushErr, wcs[1].Status, "second completion status")
}

func TestResponderBadReceiveBuffer(t *testing.T) {
	env := newRC(t)
	// A receive WQE whose lkey was deregistered: class A, remote operational error.
	m, _ := env.region(64, mr.AccessLocalWrite)
	require.NoError(t, env.q.PostRecv([]qp.RecvWR{{ID: 4, SGList: []mr.SGE{{Addr: m.IOVA(), Length: 64, LKey: m.LKey()}}}}))
	require.NoError(t, m.DeregMR())
	rspWantAck(t, env.deliver(env.req(packet.RCSendOnly, 100, true, []byte("x"), nil)),
		packet.SyndromeNAKRemoteOperationalError, 100, 0)
	rspWantState(t, env.q, qp.StateErr)
	wcs := env.poll()
	require.Len(t, wcs, 1, "completions")
	require.Equal(t, uint64(4), wcs[0].WRID, "completion wr_id")
	require.Equal(t, cq.WCLocProtErr, wcs[0].Status, "completion status")
}

func TestResponderSendWithInvalidate(t *testing.T) {
	env := newRC(t)
	fr, err := env.mem.AllocMR(env.pd, 1)
	require.NoError(t, err)
	page := make([]byte, 4096)
	key := mr.IncKey(fr.RKey())
	require.NoError(t, env.mem.RegFast(env.pd, &mr.FastReg{Key: key, Access: remoteAccess, IOVA: 0x10000, Length: 4096, PageSize: 4096, Pages: [][]byte{page}}))
	env.postRecv(1, 64)
	rspWantAck(t, env.deliver(env.req(packet.RCSendOnlyWithInvalidate, 100, true, []byte("bye"), func(h *packet.Headers) {
		h.IETH.RKey = key
	})), packet.SyndromeACKUnlimited, 100, 1)
	want := cq.WC{WRID: 1, Opcode: cq.OpcodeRecv, ByteLen: 3, InvalidatedRKey: key, QPNum: env.q.QPN(), WCFlags: cq.WCFlagWithInv}
	require.Equal(t, []cq.WC{want}, env.poll(), "completions")
	// The region is invalid now: a WRITE through the key fails.
	rspWantAck(t, env.deliver(env.req(packet.RCRDMAWriteOnly, 101, true, []byte("x"), rspRETH(0x10000, key, 1))),
		packet.SyndromeNAKRemoteAccessError, 101, 1)
	require.Zero(t, page[0], "write through an invalidated key")
}

func TestResponderSendWithInvalidateFails(t *testing.T) {
	env := newRC(t)
	env.postRecv(1, 64)
	// A plain user region cannot be invalidated remotely: class J.
	m, _ := env.region(64, remoteAccess)
	rspWantAck(t, env.deliver(env.req(packet.RCSendOnlyWithInvalidate, 100, true, []byte("bye"), func(h *packet.Headers) {
		h.IETH.RKey = m.RKey()
	})), packet.SyndromeNAKInvalidRequest, 100, 0)
	rspWantState(t, env.q, qp.StateErr)
	wcs := env.poll()
	require.Len(t, wcs, 1, "completions")
	require.Equal(t, cq.WCRemInvReqErr, wcs[0].Status, "completion status")
}

func TestResponderDropsWrongState(t *testing.T) {
	env := newRspEnv(t, rspOptions{access: rcAccess, state: qp.StateRTR, maxDestRd: 1})
	env.postRecv(1, 8)
	// RTR receives (and reports communication established).
	rspWantAck(t, env.deliver(env.req(packet.RCSendOnly, 0, true, nil, nil)), packet.SyndromeACKUnlimited, 0, 1)
	require.NoError(t, env.q.Modify(&qp.Attr{State: qp.StateErr}, qp.AttrState))
	rspWantNone(t, env.deliver(env.req(packet.RCSendOnly, 1, true, nil, nil)))
	require.Equal(t, uint64(1), env.e.Counters().Load(counter.RcvdWrongState), "rcvd_wrong_state")
}

func TestResponderReinitialisesOnNewConnection(t *testing.T) {
	env := newRC(t)
	env.postRecv(1, 8)
	rspWantAck(t, env.deliver(env.req(packet.RCSendOnly, 100, true, nil, nil)), packet.SyndromeACKUnlimited, 100, 1)
	// RESET and a new RTR with another rq_psn start a fresh PSN and MSN sequence.
	require.NoError(t, env.q.Modify(&qp.Attr{State: qp.StateReset}, qp.AttrState))
	require.NoError(t, env.q.Modify(&qp.Attr{State: qp.StateInit, PortNum: 1, AccessFlags: rcAccess},
		qp.AttrState|qp.AttrPKeyIndex|qp.AttrPort|qp.AttrAccessFlags))
	a, _ := env.q.Query()
	a.State, a.RQPSN = qp.StateRTR, 5000
	require.NoError(t, env.q.Modify(&a, qp.AttrState|qp.AttrAV|qp.AttrPathMTU|qp.AttrDestQPN|qp.AttrRQPSN|qp.AttrMaxDestRdAtomic|qp.AttrMinRNRTimer))
	env.postRecv(2, 8)
	rspWantAck(t, env.deliver(env.req(packet.RCSendOnly, 5000, true, nil, nil)), packet.SyndromeACKUnlimited, 5000, 1)
}

func TestResponderWrongPathAndOpcode(t *testing.T) {
	env := newRC(t)
	env.postRecv(1, 8)
	p := env.req(packet.RCSendOnly, 100, true, nil, nil)
	from := env.from
	env.from.Src = netip.MustParseAddrPort("10.0.0.9:5000")
	rspWantNone(t, env.deliver(p))
	env.from = from
	require.Equal(t, uint64(1), env.e.Counters().Load(counter.RcvdWrongPath), "wrong source not counted")
	// A UC or UD opcode on an RC QP is dropped.
	rspWantNone(t, env.deliver(env.req(packet.UCSendOnly, 100, true, nil, nil)))
	rspWantNone(t, env.deliver(env.req(packet.UDSendOnly, 100, true, nil, nil)))
	require.Equal(t, uint64(2), env.e.Counters().Load(counter.RcvdBadOpcode), "opcode not counted")
	rspWantAck(t, env.deliver(p), packet.SyndromeACKUnlimited, 100, 1)
}

func TestResponderCQOverflow(t *testing.T) {
	env := newRspEnv(t, rspOptions{access: rcAccess, rqPSN: 100, maxDestRd: 1, recvCQDepth: 1})
	env.postRecv(1, 8)
	env.postRecv(2, 8)
	rspWantAck(t, env.deliver(env.req(packet.RCSendOnly, 100, true, nil, nil)), packet.SyndromeACKUnlimited, 100, 1)
	// The second completion finds the CQ full (class G): the QP enters ERR and the message, never
	// reported, is not acknowledged.
	rspWantNone(t, env.deliver(env.req(packet.RCSendOnly, 101, true, nil, nil)))
	rspWantState(t, env.q, qp.StateErr)
	require.Error(t, env.recvCQ.Err(), "CQ not in error")
	// rdma_recvs counts the completion the CQ took, not the one it refused.
	assert.Equal(t, uint64(1), env.e.Counters().Load(counter.RDMARecvs))
}

// wantRecvWCs checks the receive completions waiting, by WR ID and status, in order.
func wantRecvWCs(t *testing.T, env *rspEnv, want ...cq.WC) {
	t.Helper()
	got := env.poll()
	require.Len(t, got, len(want), "completions %+v", got)
	for i, w := range want {
		assert.Equal(t, w.WRID, got[i].WRID, "completion %d", i)
		assert.Equal(t, w.Status, got[i].Status, "completion %d (WR %d)", i, got[i].WRID)
	}
}

// TestResponderDroppedMessageWQE drops a message after it took a receive WQE and checks what
// becomes of the WQE: one of an SRQ completes in error, one of the QP's own queue serves the next.
func TestResponderDroppedMessageWQE(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T)
	}{
		// A UC message dropped after it took a receive WQE from an SRQ completes that WQE in error
		// (IBTA class E) instead of keeping it for the next message, which would hide a WQE of a
		// queue other QPs share behind this QP's next message. The QP stays in RTS.
		{"UC message from an SRQ completes its WQE", func(t *testing.T) {
			env := newRspEnv(t, rspOptions{typ: qp.TypeUC, access: mr.AccessLocalWrite | mr.AccessRemoteWrite, rqPSN: 10, srq: true})
			env.postRecv(1, 1024)
			env.postRecv(2, 1024)
			env.postRecv(3, 4)
			env.postRecv(4, 64)
			env.postRecv(5, 1024)
			msg := rspPattern(3*rspMTUB, 2)

			// A MIDDLE is lost: the LAST reveals it and the message's WQE completes at once.
			rspWantNone(t, env.deliver(env.req(packet.UCSendFirst, 10, false, msg[:rspMTUB], nil)))
			rspWantNone(t, env.deliver(env.req(packet.UCSendLast, 12, false, msg[2*rspMTUB:], nil)))
			wantRecvWCs(t, env, cq.WC{WRID: 1, Status: cq.WCRemInvReqErr})

			// The next message takes the next WQE.
			next := rspPattern(rspMTUB+1, 9)
			env.deliver(env.req(packet.UCSendFirst, 20, false, next[:rspMTUB], nil))
			env.deliver(env.req(packet.UCSendLast, 21, false, next[rspMTUB:], nil))
			wantRecvWCs(t, env, cq.WC{WRID: 2, Status: cq.WCSuccess})

			// Too long for its WQE: LOC_LEN_ERR, the WQE is not reused.
			env.deliver(env.req(packet.UCSendOnly, 22, false, []byte("12345"), nil))
			wantRecvWCs(t, env, cq.WC{WRID: 3, Status: cq.WCLocLenErr})

			// A WRITE with immediate that fails its R_Key check after taking a WQE: REM_ACCESS_ERR.
			m, buf := env.region(64, remoteAccess)
			env.deliver(env.req(packet.UCRDMAWriteOnlyWithImmediate, 23, false, []byte("x"), rspRETH(m.IOVA(), m.RKey()+1, 1)))
			wantRecvWCs(t, env, cq.WC{WRID: 4, Status: cq.WCRemAccessErr})
			assert.Zero(t, buf[0], "memory written through a bad R_Key")

			// A FIRST arriving while a message is open ends it the same way, and starts its own.
			env.deliver(env.req(packet.UCSendFirst, 24, false, msg[:rspMTUB], nil))
			env.postRecv(6, 64)
			env.deliver(env.req(packet.UCSendOnly, 25, false, []byte("s"), nil))
			wantRecvWCs(t, env, cq.WC{WRID: 5, Status: cq.WCRemInvReqErr}, cq.WC{WRID: 6, Status: cq.WCSuccess})

			rspWantState(t, env.q, qp.StateRTS)
			assert.Zero(t, env.q.SRQ().Len(), "WQEs left in the SRQ")
		}},
		// A datagram too long for the SRQ WQE it took completes that WQE with LOC_LEN_ERR; the next
		// datagram gets the next WQE and the QP stays in RTS.
		{"UD datagram too long for its SRQ WQE completes it", func(t *testing.T) {
			env := newRspEnv(t, rspOptions{typ: qp.TypeUD, srq: true})
			env.postRecv(1, packet.GRHSize+4)
			env.postRecv(2, packet.GRHSize+64)
			rspWantNone(t, env.deliver(udSend(env, udQKey, []byte("12345"), false)))
			wantRecvWCs(t, env, cq.WC{WRID: 1, Status: cq.WCLocLenErr})
			rspWantNone(t, env.deliver(udSend(env, udQKey, []byte("1234"), false)))
			wantRecvWCs(t, env, cq.WC{WRID: 2, Status: cq.WCSuccess})
			assert.Equal(t, uint64(1), env.e.Counters().Load(counter.RcvdTooLong))
			rspWantState(t, env.q, qp.StateRTS)
		}},
		// Without an SRQ the dropped datagram's WQE takes the next one (IBTA class D).
		{"UD datagram too long without an SRQ keeps its WQE", func(t *testing.T) {
			env := newRspEnv(t, rspOptions{typ: qp.TypeUD})
			env.postRecv(1, packet.GRHSize+4)
			rspWantNone(t, env.deliver(udSend(env, udQKey, []byte("12345"), false)))
			wantRecvWCs(t, env)
			rspWantNone(t, env.deliver(udSend(env, udQKey, []byte("1234"), false)))
			wantRecvWCs(t, env, cq.WC{WRID: 1, Status: cq.WCSuccess})
		}},
	} {
		t.Run(tc.name, tc.run)
	}
}
