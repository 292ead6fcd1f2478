package transport

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

// deliverMore hands p to the engine as a packet that more of the burst follows, and returns what
// it produced.
func (env *rspEnv) deliverMore(p *packet.Parsed) []*packet.Parsed {
	env.t.Helper()
	env.out.Reset()
	env.e.ReceiveMore(env.now, p, env.from, &env.out)
	return env.collect()
}

// TestBurst hands the engine packets that more of a burst follows (ReceiveMore): the responder
// puts its ACK off to the end of the burst, and the requester runs once for the whole burst.
func TestBurst(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T)
	}{
		{"responder sends one ACK", func(t *testing.T) {
			env := newRC(t)
			env.postRecv(1, 64)
			env.postRecv(2, 64)
			env.postRecv(3, 64)
			rspWantNone(t, env.deliverMore(env.req(packet.RCSendOnly, 100, true, []byte("a"), nil)))
			rspWantNone(t, env.deliverMore(env.req(packet.RCRDMAWriteOnly, 101, true, nil, rspRETH(0, 0, 0))))
			require.True(t, env.e.Deadline().Equal(env.now), "deadline %v during a burst, want now", env.e.Deadline())
			rspWantAck(t, env.deliver(env.req(packet.RCSendOnly, 102, true, []byte("c"), nil)), packet.SyndromeACKUnlimited, 102, 3)
			require.True(t, env.e.Deadline().IsZero(), "deadline %v after the burst", env.e.Deadline())
			require.Len(t, env.poll(), 2, "receive completions")
		}},
		// The ACK keeps the MSN it was due with, even when a later packet of the burst, asking for
		// no acknowledgement, completes another message.
		{"ACK keeps its MSN", func(t *testing.T) {
			env := newRC(t)
			env.postRecv(1, 64)
			env.postRecv(2, 64)
			rspWantNone(t, env.deliverMore(env.req(packet.RCSendOnly, 100, true, []byte("a"), nil)))
			rspWantAck(t, env.deliver(env.req(packet.RCSendOnly, 101, false, []byte("b"), nil)), packet.SyndromeACKUnlimited, 100, 1)
		}},
		// Any other response sends the pending ACK first, so responses leave in PSN order.
		{"ACK precedes other responses", func(t *testing.T) {
			t.Run("read response", func(t *testing.T) {
				env := newRC(t)
				m, _ := env.region(64, remoteAccess)
				env.postRecv(1, 64)
				rspWantNone(t, env.deliverMore(env.req(packet.RCSendOnly, 100, true, []byte("a"), nil)))
				ps := env.deliverMore(env.req(packet.RCRDMAReadRequest, 101, true, nil, rspRETH(m.IOVA(), m.RKey(), 8)))
				require.Len(t, ps, 2, "want the ACK and the READ response")
				rspWantResp(t, ps[0], packet.RCAcknowledge, 100, packet.SyndromeACKUnlimited, 1)
				rspWantResp(t, ps[1], packet.RCRDMAReadResponseOnly, 101, packet.SyndromeACKUnlimited, 2)
				rspWantNone(t, env.run())
			})
			t.Run("RNR NAK", func(t *testing.T) {
				env := newRC(t)
				env.postRecv(1, 64)
				rspWantNone(t, env.deliverMore(env.req(packet.RCSendOnly, 100, true, []byte("a"), nil)))
				ps := env.deliver(env.req(packet.RCSendOnly, 101, true, []byte("b"), nil))
				require.Len(t, ps, 2, "want the ACK and the RNR NAK")
				rspWantResp(t, ps[0], packet.RCAcknowledge, 100, packet.SyndromeACKUnlimited, 1)
				rspWantResp(t, ps[1], packet.RCAcknowledge, 101, packet.SyndromeRNRNAK(rspRNRCode), 1)
			})
			t.Run("sequence error NAK", func(t *testing.T) {
				env := newRC(t)
				env.postRecv(1, 64)
				rspWantNone(t, env.deliverMore(env.req(packet.RCSendOnly, 100, true, []byte("a"), nil)))
				ps := env.deliver(env.req(packet.RCSendOnly, 105, true, []byte("b"), nil))
				require.Len(t, ps, 2, "want the ACK and the NAK")
				rspWantResp(t, ps[0], packet.RCAcknowledge, 100, packet.SyndromeACKUnlimited, 1)
				rspWantResp(t, ps[1], packet.RCAcknowledge, 101, packet.SyndromeNAKPSNSequenceError, 1)
			})
		}},
		// A burst that nobody ends is ended by Run, which the deadline calls for.
		{"ended by Run", func(t *testing.T) {
			env := newRC(t)
			env.postRecv(1, 64)
			rspWantNone(t, env.deliverMore(env.req(packet.RCSendOnly, 100, true, []byte("a"), nil)))
			rspWantAck(t, env.run(), packet.SyndromeACKUnlimited, 100, 1)
			rspWantNone(t, env.run())
		}},
		// Duplicates of a retransmitted burst are acknowledged once.
		{"duplicates acknowledged once", func(t *testing.T) {
			env := newRC(t)
			env.postRecv(1, 64)
			env.postRecv(2, 64)
			rspWantAck(t, env.deliver(env.req(packet.RCSendOnly, 100, true, []byte("a"), nil)), packet.SyndromeACKUnlimited, 100, 1)
			rspWantAck(t, env.deliver(env.req(packet.RCSendOnly, 101, true, []byte("b"), nil)), packet.SyndromeACKUnlimited, 101, 2)
			rspWantNone(t, env.deliverMore(env.req(packet.RCSendOnly, 100, true, []byte("a"), nil)))
			rspWantAck(t, env.deliver(env.req(packet.RCSendOnly, 101, true, []byte("b"), nil)), packet.SyndromeACKUnlimited, 101, 2)
		}},
		// The requester sends what a burst of responses allows when the burst ends.
		{"requester runs once", func(t *testing.T) {
			r := newAllocRig(t)
			dst := r.a.d.region(4096, 0)
			wrs := []qp.SendWR{
				{Opcode: qp.WRRDMARead, SGList: []mr.SGE{dst.sge(0, 8)}, RDMA: qp.RDMAInfo{RKey: 5}},
				{Opcode: qp.WRSend, Flags: qp.SendFence, SGList: []mr.SGE{dst.sge(8, 8)}},
			}
			require.NoError(t, postSend(r.a.q, wrs))
			r.a.e.Run(hStart, &r.out)
			require.Len(t, r.out.Packets, 1, "packets before the READ completed: the READ request only")
			h := packet.Headers{BTH: packet.BTHFields{Opcode: packet.RCRDMAReadResponseOnly, PSN: 0, DestQP: r.a.q.QPN(), PKey: 0xFFFF},
				AETH: packet.AETHFields{Syndrome: packet.SyndromeACKUnlimited}}
			buf, err := packet.AppendPacket(r.resp[:0], &h, make([]byte, 8))
			require.NoError(t, err)
			require.NoError(t, packet.Parse(buf, &r.parsed))
			r.out.Reset()
			r.a.e.ReceiveMore(hStart, &r.parsed, r.from, &r.out)
			require.Empty(t, r.out.Packets, "packets in the middle of a burst")
			require.True(t, r.a.e.Deadline().Equal(hStart), "deadline %v during a burst, want now", r.a.e.Deadline())
			r.a.e.Run(hStart, &r.out)
			require.Len(t, r.out.Packets, 1, "packets after the burst: the fenced SEND")
		}},
		// An ACK put off by a burst is not lost when the QP leaves RTS before the burst ends (the
		// application moved it to ERR on seeing the receive completion): it goes out first.
		{"ACK survives a modify to ERR", func(t *testing.T) {
			env := newRC(t)
			env.postRecv(1, 64)
			rspWantNone(t, env.deliverMore(env.req(packet.RCSendOnly, 100, true, []byte("a"), nil)))
			require.Len(t, env.poll(), 1)
			require.NoError(t, env.q.Modify(&qp.Attr{State: qp.StateErr}, qp.AttrState))
			rspWantAck(t, env.deliver(env.req(packet.RCSendOnly, 101, true, []byte("b"), nil)), packet.SyndromeACKUnlimited, 100, 1)
			rspWantState(t, env.q, qp.StateErr)
		}},
	} {
		t.Run(tc.name, tc.run)
	}
}
