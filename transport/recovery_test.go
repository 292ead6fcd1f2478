package transport

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

// requestPSNs returns the PSNs of the request packets a emitted, in order.
func requestPSNs(t *testing.T, h *harness, a *hEndpoint) []uint32 {
	var psns []uint32
	for _, p := range h.trace {
		var pp packet.Parsed
		require.NoError(t, packet.Parse(p.buf, &pp))
		if p.path.Src.Addr() == a.d.addr && pp.Opcode().IsRequest() {
			psns = append(psns, uint32(pp.BTH().PSN()))
		}
	}
	return psns
}

// dropOnce returns a tap that drops the first request packet from a with PSN psn.
func dropOnce(a *hEndpoint, psn packet.PSN) func(*hPacket, *packet.Parsed) bool {
	dropped := false
	return func(p *hPacket, pp *packet.Parsed) bool {
		if !dropped && p.path.Src.Addr() == a.d.addr && pp.Opcode().IsRequest() && pp.BTH().PSN() == psn {
			dropped = true
			return false
		}
		return true
	}
}

// TestLossRecovery loses packets of RC traffic and checks that the requester, the completer
// and the responder recover with the data intact.
func TestLossRecovery(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T)
	}{
		// Loses one packet of a long SEND: the responder's sequence NAK makes the requester resend
		// from the lost PSN on, without a timeout, and the data arrives intact.
		{"go-back-N after a lost packet", func(t *testing.T) {
			x := newE2E(t, hQPOptions{mtu: qp.MTU1024, sqPSN: 0xFFFFFE})
			x.h.keep = true
			x.h.tap = dropOnce(x.a, 1)
			recv := x.b.d.region(10240, 0)
			x.b.postRecv(1, recv.sge(0, 10240))
			wc := x.one(qp.SendWR{ID: 1, Opcode: qp.WRSend, SGList: []mr.SGE{x.aBuf.sge(0, 10*1024)}})
			wantWC(t, wc, 1, cq.WCSuccess, cq.OpcodeSend)
			require.True(t, bytes.Equal(recv.buf, x.aBuf.buf[:10240]), "data differs")
			// PSN 1 is lost (the trace holds what the network carried); the responder NAKs at PSN 2.
			want := []uint32{0xFFFFFE, 0xFFFFFF, 0, 2, 3, 4, 5, 6, 7, 1, 2, 3, 4, 5, 6, 7}
			require.Equal(t, want, requestPSNs(t, x.h, x.a), "request PSNs")
			require.Equal(t, hStart, x.h.now, "recovery waited for a timeout")
			require.Equal(t, uint64(1), x.a.d.count(counter.RcvdSeqErr), "seq errors")
			require.Equal(t, uint64(1), x.a.d.count(counter.CompleterRetryErr), "retries")
		}},
		// Loses the last packet of a message, which nothing follows: only the retransmit timer
		// recovers, one timeout later. The timer resends the oldest packet alone (asking for an
		// ACK); the responder, which has it, acknowledges up to the gap, and only the lost packet
		// follows.
		{"last packet of a message lost", func(t *testing.T) {
			x := newE2E(t, hQPOptions{mtu: qp.MTU1024, timeout: 12})
			x.h.keep = true
			x.h.tap = dropOnce(x.a, 2)
			x.b.postRecv(1, x.b.d.region(4096, 0).sge(0, 4096))
			wc := x.one(qp.SendWR{ID: 1, Opcode: qp.WRSend, SGList: []mr.SGE{x.aBuf.sge(0, 3000)}})
			wantWC(t, wc, 1, cq.WCSuccess, cq.OpcodeSend)
			// PSN 2, the only one asking for an ACK, is lost (the trace holds what the network carried).
			require.Equal(t, []uint32{0, 1, 0, 2}, requestPSNs(t, x.h, x.a), "request PSNs")
			require.Equal(t, ackTimeout(12), x.h.now.Sub(hStart), "recovery after one timeout")
		}},
		// Loses a READ response in the middle: the READ is re-requested from the first missing
		// response.
		{"READ response lost mid-stream", func(t *testing.T) {
			x := newE2E(t, hQPOptions{mtu: qp.MTU1024, sqPSN: 100})
			x.h.keep = true
			dropped := false
			x.h.tap = func(p *hPacket, pp *packet.Parsed) bool {
				if !dropped && pp.Opcode() == packet.RCRDMAReadResponseMiddle && pp.BTH().PSN() == 102 {
					dropped = true
					return false
				}
				return true
			}
			wc := x.one(qp.SendWR{ID: 1, Opcode: qp.WRRDMARead, SGList: []mr.SGE{x.aBuf.sge(0, 6000)},
				RDMA: qp.RDMAInfo{RemoteAddr: x.bBuf.mr.IOVA() + 5, RKey: x.bBuf.mr.RKey()}})
			wantWC(t, wc, 1, cq.WCSuccess, cq.OpcodeRDMARead)
			require.True(t, bytes.Equal(x.aBuf.buf[:6000], x.bBuf.buf[5:6005]), "READ data differs")
			var reqs []packet.RETHFields
			for _, p := range x.h.trace {
				var pp packet.Parsed
				require.NoError(t, packet.Parse(p.buf, &pp))
				if pp.Opcode() == packet.RCRDMAReadRequest {
					reqs = append(reqs, pp.RETH().Fields())
				}
			}
			va := x.bBuf.mr.IOVA() + 5
			require.Len(t, reqs, 2, "READ requests")
			require.Equal(t, va+2048, reqs[1].VirtualAddress, "re-request VA")
			require.Equal(t, uint32(6000-2048), reqs[1].DMALength, "re-request length")
		}},
		// Kernel rxe answers a READ asked again from the middle of its message the way it answered
		// the original: a replay that starts with a MIDDLE packet. Between the request and that
		// replay, the rest of the old answer is still arriving. Both READs complete with their
		// data.
		{"READ replay from a MIDDLE packet after the stale stream", func(t *testing.T) {
			pr := newProbe(t, hQPOptions{mtu: qp.MTU256})
			dst := pr.a.d.region(4096, 0)
			data := hPattern(4096, 5)
			pr.a.post(
				qp.SendWR{ID: 1, Opcode: qp.WRRDMARead, Flags: qp.SendSignaled, SGList: []mr.SGE{dst.sge(0, 2048)},
					RDMA: qp.RDMAInfo{RemoteAddr: 0x10000, RKey: 0x55}},
				qp.SendWR{ID: 2, Opcode: qp.WRRDMARead, Flags: qp.SendSignaled, SGList: []mr.SGE{dst.sge(2048, 2048)},
					RDMA: qp.RDMAInfo{RemoteAddr: 0x20000, RKey: 0x55}},
			)
			pr.idle()
			base := pr.sent[0].h.BTH.PSN
			op := func(k int) packet.Opcode {
				switch k % 8 {
				case 0:
					return packet.RCRDMAReadResponseFirst
				case 7:
					return packet.RCRDMAReadResponseLast
				}
				return packet.RCRDMAReadResponseMiddle
			}
			resp := func(k int, o packet.Opcode) {
				pr.readResp(o, base.Add(uint32(k)), data[k*256:(k+1)*256])
			}
			resp(0, op(0))
			resp(1, op(1))
			// 2 is lost: 3 reveals the gap and the rest of the old answer follows.
			for k := 3; k < 16; k++ {
				resp(k, op(k))
			}
			// The replay from 2, as rxe sends it: MIDDLE first.
			for k := 2; k < 16; k++ {
				resp(k, op(k))
			}
			wcs := pr.a.pollSend()
			require.Len(t, wcs, 2)
			wantWC(t, wcs[0], 1, cq.WCSuccess, cq.OpcodeRDMARead)
			wantWC(t, wcs[1], 2, cq.WCSuccess, cq.OpcodeRDMARead)
			require.Equal(t, data, dst.buf[:4096])
		}},
		// A responder that takes longer to work through a window of packets than the requester's
		// ACK timeout (kernel rxe in an emulated machine is one) must not be driven into a
		// retransmission storm: every go-back-N round would add a window of duplicates to its
		// backlog, the ACKs would fall ever further behind the timer, and retry_cnt would run out
		// although the peer is alive.
		{"slow responder under loss", func(t *testing.T) {
			h := newHarness(t)
			h.seed(5)
			h.faults = hFaults{Loss: 0.02}
			a, b := h.pair(hQPOptions{mtu: qp.MTU1024, timeout: 14}) // 67 ms, retry_cnt 7, as perftest uses
			b.d.service = 1 * time.Millisecond                       // 1000 packets/s
			const msgs, size = 40, 64 << 10
			src := a.d.region(size, 1)
			dst := b.d.region(size, 0)
			for i := range msgs {
				b.postRecv(uint64(i), dst.sge(0, size))
				a.post(qp.SendWR{ID: uint64(i), Opcode: qp.WRSend, Flags: qp.SendSignaled, SGList: []mr.SGE{src.sge(0, size)}})
			}
			h.runUntil(func() bool { return a.scq.Len() == msgs }, 10*time.Minute)
			wcs := make([]cq.WC, msgs)
			n := a.scq.Poll(wcs)
			for _, wc := range wcs[:n] {
				require.Equal(t, cq.WCSuccess, wc.Status, "send %d after %v of fake time; network %+v", wc.WRID, h.now.Sub(hStart), h.stats)
			}
			require.Equal(t, msgs, n, "sends completed")
			t.Logf("%d x %d KiB in %v of fake time; network %+v", msgs, size>>10, h.now.Sub(hStart).Round(time.Millisecond), h.stats)
		}},
	} {
		t.Run(tc.name, tc.run)
	}
}

// TestReconnect takes a QP through RESET back to RTS and checks that it starts over.
func TestReconnect(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T)
	}{
		// Brings a QP that failed back through RESET to RTS with a new sq_psn and sends again.
		{"after an error with a new sq_psn", func(t *testing.T) {
			x := newE2E(t, hQPOptions{})
			wc := x.one(qp.SendWR{ID: 1, Opcode: qp.WRRDMAWrite, SGList: []mr.SGE{x.aBuf.sge(0, 8)}, RDMA: qp.RDMAInfo{RKey: 0xBAD}})
			wantWC(t, wc, 1, cq.WCRemAccessErr, 0)
			for _, ep := range []*hEndpoint{x.a, x.b} {
				require.NoError(t, ep.q.Modify(&qp.Attr{State: qp.StateReset}, qp.AttrState))
			}
			x.a.o.sqPSN, x.b.o.sqPSN = 0x500, 0x900
			x.a.connect(x.b)
			x.b.connect(x.a)
			x.b.postRecv(2, x.b.d.region(64, 0).sge(0, 64))
			wc = x.one(qp.SendWR{ID: 2, Opcode: qp.WRSend, SGList: []mr.SGE{x.aBuf.sge(0, 10)}})
			wantWC(t, wc, 2, cq.WCSuccess, cq.OpcodeSend)
			require.Equal(t, packet.PSN(0x501), x.a.e.req.psn, "next PSN")
		}},
		// Reconnects b to a fresh peer with the same PSNs through a RESET the engines never see
		// (the whole RESET->RTS walk happens between two of their calls). b must start over at its
		// new rq_psn and sq_psn, not carry on with the old connection's: otherwise it takes the new
		// peer's first SEND for a duplicate, acknowledges it and drops the data.
		{"through a RESET the engines never saw", func(t *testing.T) {
			x := newE2E(t, hQPOptions{})
			x.b.postRecv(1, x.b.d.region(64, 0).sge(0, 64))
			wc := x.one(qp.SendWR{ID: 1, Opcode: qp.WRSend, SGList: []mr.SGE{x.aBuf.sge(0, 10)}})
			wantWC(t, wc, 1, cq.WCSuccess, cq.OpcodeSend)
			x.b.pollRecv()
			// b reconnects (unseen RESET) to a fresh QP c on a's device, same PSNs.
			c := x.a.d.createQP(hQPOptions{})
			require.NoError(t, x.b.q.Modify(&qp.Attr{State: qp.StateReset}, qp.AttrState))
			x.b.connect(c)
			c.connect(x.b)
			x.b.postRecv(2, x.b.d.region(64, 0).sge(0, 64))
			c.post(qp.SendWR{ID: 7, Opcode: qp.WRSend, Flags: qp.SendSignaled, SGList: []mr.SGE{c.d.region(64, 0).sge(0, 10)}})
			x.h.settle(10 * time.Second)
			wcs := x.b.pollRecv()
			require.Len(t, wcs, 1, "b recv")
			require.Equal(t, uint64(2), wcs[0].WRID, "b recv")
			wcs = c.pollSend()
			require.Len(t, wcs, 1, "c send")
			require.Equal(t, cq.WCSuccess, wcs[0].Status, "c send")
			// and b -> c
			c.postRecv(3, c.d.region(64, 0).sge(0, 64))
			x.b.post(qp.SendWR{ID: 8, Opcode: qp.WRSend, Flags: qp.SendSignaled, SGList: []mr.SGE{x.bBuf.sge(0, 10)}})
			x.h.settle(10 * time.Second)
			wcs = x.b.pollSend()
			require.Len(t, wcs, 1, "b send")
			require.Equal(t, cq.WCSuccess, wcs[0].Status, "b send")
		}},
	} {
		t.Run(tc.name, tc.run)
	}
}
