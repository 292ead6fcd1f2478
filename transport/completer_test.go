package transport

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

// sendTimes returns the fake times (since hStart) at which the probe saw packets with PSN psn.
func (pr *probe) sendTimes(psn packet.PSN) []time.Duration {
	var ts []time.Duration
	for _, s := range pr.sent {
		if s.h.BTH.PSN == psn {
			ts = append(ts, time.Duration(s.at))
		}
	}
	return ts
}

// TestCompleterRetryExhaustion checks that an unanswered request is sent again exactly retry_cnt
// times, the Local ACK Timeout T after the first transmission, then backed off to 2 T and 4 T (the
// most the adapted timeout may stretch, see rto.go), then fails with RETRY_EXC_ERR one timeout
// after the last retransmission, and that the QP goes to ERR and flushes the rest. retry_cnt 7 is seven retries,
// not infinite (IBTA; rxe differs). After a timeout the requester probes with the oldest packet
// alone, so the second request, never acknowledged, goes out only once.
func TestCompleterRetryExhaustion(t *testing.T) {
	for _, tc := range []struct{ timeout, retry uint8 }{{14, 3}, {10, 7}, {1, 1}, {18, 0}} {
		pr := newProbe(t, hQPOptions{timeout: tc.timeout, retryCnt: tc.retry, noRetryDflts: true, sqPSN: 50})
		period := ackTimeout(tc.timeout)
		pr.a.post(qp.SendWR{ID: 1, Opcode: qp.WRSend}, qp.SendWR{ID: 2, Opcode: qp.WRSend, Flags: qp.SendSignaled})
		pr.h.runUntil(func() bool { return pr.a.scq.Len() > 0 }, time.Hour)
		require.Equal(t, []time.Duration{0}, pr.sendTimes(51), "timeout %d retry %d: PSN 51 sent once at 0", tc.timeout, tc.retry)
		for _, psn := range []packet.PSN{50} {
			ts := pr.sendTimes(psn)
			require.Len(t, ts, int(tc.retry)+1, "timeout %d retry %d: transmissions of PSN %d", tc.timeout, tc.retry, psn)
			for i, at := range ts {
				require.Equal(t, backedOff(period, i), at, "timeout %d: transmission %d", tc.timeout, i)
			}
		}
		require.Equal(t, backedOff(period, int(tc.retry)+1), pr.h.now.Sub(hStart), "time of failure")
		require.LessOrEqual(t, pr.h.now.Sub(hStart), RetrySpan(tc.timeout, tc.retry), "RetrySpan bounds the failure")
		wcs := pr.a.pollSend()
		require.Len(t, wcs, 2)
		wantWC(t, wcs[0], 1, cq.WCRetryExcErr, 0)
		wantWC(t, wcs[1], 2, cq.WCWRFlushErr, 0)
		require.Equal(t, qp.StateErr, pr.a.q.State())
		ctr := pr.a.d
		require.Equal(t, uint64(1), ctr.count(counter.RetryExceededErr), "retry_exceeded")
		require.Equal(t, uint64(tc.retry), ctr.count(counter.CompleterRetryErr), "completer_retry")
		require.True(t, pr.a.e.Deadline().IsZero(), "deadline armed in ERR")
	}
}

// backedOff returns when transmission n of an unanswered packet goes out: the timeouts before it
// are T, 2 T, then 4 T each.
func backedOff(period time.Duration, n int) time.Duration {
	var at time.Duration
	for i := range n {
		at += period << min(i, 2)
	}
	return at
}

// TestCompleterTimeoutZero checks that timeout 0 disables retransmission.
func TestCompleterTimeoutZero(t *testing.T) {
	pr := newProbe(t, hQPOptions{zeroTimeout: true})
	pr.a.post(qp.SendWR{ID: 1, Opcode: qp.WRSend})
	pr.h.settle(time.Hour)
	require.Len(t, pr.sent, 1)
	require.True(t, pr.a.e.Deadline().IsZero(), "deadline %v", pr.a.e.Deadline())
}

// rnrAuto answers the request with PSN 0 with an RNR NAK carrying timer code code until n NAKs
// were sent, then with an ACK. Like a responder waiting for a receive WQE, it ignores the packets
// behind the one it NAKed.
func rnrAuto(pr *probe, code uint8, n int) {
	naks := 0
	pr.auto = func(p *packet.Parsed) (*packet.Headers, []byte) {
		if p.BTH().PSN() != 0 {
			return nil, nil
		}
		if naks < n {
			naks++
			return pr.ackHeaders(p.BTH().PSN(), packet.SyndromeRNRNAK(code)), nil
		}
		return pr.ackHeaders(p.BTH().PSN(), packet.SyndromeACKUnlimited), nil
	}
}

// TestCompleterRNRBackoff checks the RNR NAK timer table intervals and rnr_retry exhaustion.
func TestCompleterRNRBackoff(t *testing.T) {
	for _, tc := range []struct {
		code  uint8
		retry uint8
	}{{1, 1}, {3, 2}, {14, 6}, {25, 3}, {0, 1}} {
		pr := newProbe(t, hQPOptions{rnrRetry: tc.retry, noRetryDflts: true, retryCnt: 7, timeout: 31})
		rnrAuto(pr, tc.code, 1000)
		pr.a.post(qp.SendWR{ID: 1, Opcode: qp.WRSend}, qp.SendWR{ID: 2, Opcode: qp.WRSend})
		pr.h.runUntil(func() bool { return pr.a.scq.Len() > 0 }, time.Hour)
		delay := packet.RNRTimer(tc.code)
		ts := pr.sendTimes(0)
		require.Len(t, ts, int(tc.retry)+1, "code %d: transmissions", tc.code)
		for i, at := range ts {
			require.Equal(t, time.Duration(i)*delay, at, "code %d: transmission %d", tc.code, i)
		}
		wcs := pr.a.pollSend()
		require.Len(t, wcs, 2)
		wantWC(t, wcs[0], 1, cq.WCRNRRetryExcErr, 0)
		wantWC(t, wcs[1], 2, cq.WCWRFlushErr, 0)
		require.Equal(t, uint64(tc.retry)+1, pr.a.d.count(counter.RcvdRNRErr), "code %d: rnr", tc.code)
		require.Equal(t, uint64(1), pr.a.d.count(counter.RetryRNRExceededErr), "code %d: rnr exceeded", tc.code)
	}
	require.Equal(t, 61440*time.Microsecond, packet.RNRTimer(25), "RNR timer table")
	require.Equal(t, 655360*time.Microsecond, packet.RNRTimer(0), "RNR timer table")
	require.Equal(t, 10*time.Microsecond, packet.RNRTimer(1), "RNR timer table")
}

// TestCompleterRNRInfinite checks that rnr_retry 7 never gives up.
func TestCompleterRNRInfinite(t *testing.T) {
	pr := newProbe(t, hQPOptions{rnrRetry: 7})
	rnrAuto(pr, 2, 500)
	pr.a.post(qp.SendWR{ID: 1, Opcode: qp.WRSend, Flags: qp.SendSignaled})
	pr.h.settle(time.Hour)
	wcs := pr.a.pollSend()
	require.Len(t, wcs, 1)
	wantWC(t, wcs[0], 1, cq.WCSuccess, cq.OpcodeSend)
	require.Equal(t, 501, len(pr.sent), "transmissions")
	require.Equal(t, 500*packet.RNRTimer(2), pr.h.now.Sub(hStart), "done at")
}

// TestCompleterNAKStatuses maps each NAK code to its completion status; the QP goes to ERR and
// flushes the WQEs behind the failed one. WQEs before the NAK's PSN complete successfully.
func TestCompleterNAKStatuses(t *testing.T) {
	for _, tc := range []struct {
		syn packet.Syndrome
		st  cq.Status
	}{
		{packet.SyndromeNAKInvalidRequest, cq.WCRemInvReqErr},
		{packet.SyndromeNAKRemoteAccessError, cq.WCRemAccessErr},
		{packet.SyndromeNAKRemoteOperationalError, cq.WCRemOpErr},
		{packet.SyndromeNAKInvalidRDRequest, cq.WCRemInvRDReqErr},
		{0x6F, cq.WCRemOpErr},
		{0x40, cq.WCBadRespErr},
	} {
		pr := newProbe(t, hQPOptions{sqPSN: 100})
		sig := qp.SendSignaled
		pr.a.post(qp.SendWR{ID: 1, Opcode: qp.WRSend, Flags: sig}, qp.SendWR{ID: 2, Opcode: qp.WRSend, Flags: sig},
			qp.SendWR{ID: 3, Opcode: qp.WRSend, Flags: sig})
		pr.idle()
		pr.respond(pr.ackHeaders(101, tc.syn), nil)
		wcs := pr.a.pollSend()
		require.Len(t, wcs, 3, "%v", tc.syn)
		wantWC(t, wcs[0], 1, cq.WCSuccess, cq.OpcodeSend)
		wantWC(t, wcs[1], 2, tc.st, 0)
		wantWC(t, wcs[2], 3, cq.WCWRFlushErr, 0)
		require.Equal(t, qp.StateErr, pr.a.q.State(), "%v", tc.syn)
	}
}

// TestCompleterSequenceNAK checks that a PSN sequence error NAK acknowledges everything before its
// PSN and restarts transmission from it; duplicates of the NAK and stale ACKs change nothing.
func TestCompleterSequenceNAK(t *testing.T) {
	pr := newProbe(t, hQPOptions{sqPSN: 100})
	sig := qp.SendSignaled
	for i := range 4 {
		pr.a.post(qp.SendWR{ID: uint64(i), Opcode: qp.WRSend, Flags: sig})
	}
	pr.idle()
	pr.respond(pr.ackHeaders(100, packet.SyndromeACKUnlimited), nil)
	pr.respond(pr.ackHeaders(102, packet.SyndromeNAKPSNSequenceError), nil)
	pr.respond(pr.ackHeaders(102, packet.SyndromeNAKPSNSequenceError), nil) // duplicate: ignored
	pr.respond(pr.ackHeaders(100, packet.SyndromeACKUnlimited), nil)        // stale: ignored
	var psns []uint32
	for _, s := range pr.sent {
		psns = append(psns, uint32(s.h.BTH.PSN))
	}
	require.Equal(t, []uint32{100, 101, 102, 103, 102, 103}, psns, "PSNs sent")
	wcs := pr.a.pollSend()
	require.Len(t, wcs, 2)
	require.Equal(t, uint64(0), wcs[0].WRID)
	require.Equal(t, uint64(1), wcs[1].WRID)
	require.Equal(t, uint64(2), pr.a.d.count(counter.RcvdSeqErr), "seq_err")
	require.Equal(t, uint64(1), pr.a.d.count(counter.CompleterRetryErr), "retries")
	require.Equal(t, uint64(1), pr.a.d.count(counter.RcvdUnexpected), "unknown")
	// A cumulative ACK of the last PSN completes the rest in order.
	pr.respond(pr.ackHeaders(103, packet.SyndromeACKUnlimited), nil)
	wcs = pr.a.pollSend()
	require.Len(t, wcs, 2)
	require.Equal(t, uint64(2), wcs[0].WRID)
	require.Equal(t, uint64(3), wcs[1].WRID)
}

// readResp builds an RDMA READ response.
func (pr *probe) readResp(op packet.Opcode, psn packet.PSN, payload []byte) {
	hd := &packet.Headers{BTH: packet.BTHFields{Opcode: op, PSN: psn}}
	if op.Headers().Has(packet.HeaderAETH) {
		pr.msn++
		hd.AETH = packet.AETHFields{Syndrome: packet.SyndromeACKUnlimited, MSN: pr.msn}
	}
	pr.respond(hd, payload)
}

// TestCompleterPartialReadRestart loses one READ response: the requester asks again for the rest
// of the data from the first missing PSN with the VA and length moved on, and places everything.
func TestCompleterPartialReadRestart(t *testing.T) {
	pr := newProbe(t, hQPOptions{sqPSN: 0xFFFFFE, mtu: qp.MTU256})
	dst := pr.a.d.region(2000, 0)
	data := hPattern(1100, 3)
	pr.a.post(
		qp.SendWR{ID: 1, Opcode: qp.WRRDMARead, Flags: qp.SendSignaled, SGList: []mr.SGE{dst.sge(0, 600), dst.sge(1000, 500)},
			RDMA: qp.RDMAInfo{RemoteAddr: 0x10000, RKey: 0x55}},
		qp.SendWR{ID: 2, Opcode: qp.WRSend, Flags: qp.SendSignaled},
	)
	pr.idle()
	first := packet.PSN(0xFFFFFE)
	pr.readResp(packet.RCRDMAReadResponseFirst, first, data[:256])
	pr.readResp(packet.RCRDMAReadResponseMiddle, first.Add(1), data[256:512])
	// first+2 is lost; first+3 reveals the gap, first+4 (a copy of the same loss) changes nothing.
	pr.readResp(packet.RCRDMAReadResponseMiddle, first.Add(3), data[768:1024])
	pr.readResp(packet.RCRDMAReadResponseLast, first.Add(4), data[1024:1100])
	checkSent(t, pr, []wantPkt{
		{packet.RCRDMAReadRequest, first, 0, true, false},
		{packet.RCSendOnly, first.Add(5), 0, true, false},
		{packet.RCRDMAReadRequest, first.Add(2), 0, true, false},
		{packet.RCSendOnly, first.Add(5), 0, true, false},
	})
	require.Equal(t, packet.RETHFields{VirtualAddress: 0x10000 + 512, RKey: 0x55, DMALength: 1100 - 512}, pr.sent[2].h.RETH, "re-request RETH")
	pr.readResp(packet.RCRDMAReadResponseFirst, first.Add(2), data[512:768])
	pr.readResp(packet.RCRDMAReadResponseMiddle, first.Add(3), data[768:1024])
	pr.readResp(packet.RCRDMAReadResponseLast, first.Add(4), data[1024:1100])
	pr.respond(pr.ackHeaders(first.Add(5), packet.SyndromeACKUnlimited), nil)
	wcs := pr.a.pollSend()
	require.Len(t, wcs, 2)
	wantWC(t, wcs[0], 1, cq.WCSuccess, cq.OpcodeRDMARead)
	wantWC(t, wcs[1], 2, cq.WCSuccess, cq.OpcodeSend)
	require.Equal(t, data[:600], dst.buf[:600], "READ data misplaced")
	require.Equal(t, data[600:], dst.buf[1000:1500], "READ data misplaced")
}

// TestCompleterImplicitNAK: an ACK for a request after an unanswered READ means the READ's
// response was lost; the READ is requested again and completes before the SEND behind it.
func TestCompleterImplicitNAK(t *testing.T) {
	pr := newProbe(t, hQPOptions{sqPSN: 7})
	dst := pr.a.d.region(64, 0)
	pr.a.post(
		qp.SendWR{ID: 1, Opcode: qp.WRAtomicFetchAndAdd, Flags: qp.SendSignaled, SGList: []mr.SGE{dst.sge(8, 8)},
			Atomic: qp.AtomicInfo{RemoteAddr: 0x1000, RKey: 1, CompareAdd: 1}},
		qp.SendWR{ID: 2, Opcode: qp.WRSend, Flags: qp.SendSignaled},
	)
	pr.idle()
	pr.respond(pr.ackHeaders(8, packet.SyndromeACKUnlimited), nil)
	require.Len(t, pr.sent, 4, "packets after the implicit NAK")
	require.Equal(t, packet.RCFetchAdd, pr.sent[2].h.BTH.Opcode, "the resent request")
	require.Equal(t, packet.PSN(7), pr.sent[2].h.BTH.PSN, "the resent request")
	require.Empty(t, pr.a.pollSend(), "completions before the atomic's result")
	pr.msn++
	pr.respond(&packet.Headers{BTH: packet.BTHFields{Opcode: packet.RCAtomicAcknowledge, PSN: 7},
		AETH: packet.AETHFields{Syndrome: packet.SyndromeACKUnlimited, MSN: pr.msn}, AtomicAckETH: packet.AtomicAckETHFields{OriginalRemoteData: 0x0102030405060708}}, nil)
	pr.respond(pr.ackHeaders(8, packet.SyndromeACKUnlimited), nil)
	wcs := pr.a.pollSend()
	require.Len(t, wcs, 2)
	require.Equal(t, uint64(1), wcs[0].WRID)
	require.Equal(t, uint64(2), wcs[1].WRID)
	require.Equal(t, cq.WCSuccess, wcs[0].Status)
	require.Equal(t, cq.WCSuccess, wcs[1].Status)
	require.Equal(t, []byte{8, 7, 6, 5, 4, 3, 2, 1}, dst.buf[8:16], "atomic result")
}

// TestCompleterBadResponses checks responses that do not fit the request they answer.
func TestCompleterBadResponses(t *testing.T) {
	t.Run("read too short", func(t *testing.T) {
		pr := newProbe(t, hQPOptions{})
		dst := pr.a.d.region(2000, 0)
		pr.a.post(qp.SendWR{ID: 1, Opcode: qp.WRRDMARead, SGList: []mr.SGE{dst.sge(0, 1000)}, RDMA: qp.RDMAInfo{RKey: 1}})
		pr.idle()
		pr.readResp(packet.RCRDMAReadResponseOnly, 0, make([]byte, 900))
		wcs := pr.a.pollSend()
		require.Len(t, wcs, 1)
		wantWC(t, wcs[0], 1, cq.WCLocLenErr, 0)
	})
	t.Run("atomic ack for a send", func(t *testing.T) {
		pr := newProbe(t, hQPOptions{})
		pr.a.post(qp.SendWR{ID: 1, Opcode: qp.WRSend})
		pr.idle()
		pr.respond(&packet.Headers{BTH: packet.BTHFields{Opcode: packet.RCAtomicAcknowledge, PSN: 0},
			AETH: packet.AETHFields{Syndrome: packet.SyndromeACKUnlimited}}, nil)
		wcs := pr.a.pollSend()
		require.Len(t, wcs, 1)
		wantWC(t, wcs[0], 1, cq.WCBadRespErr, 0)
	})
	t.Run("response from elsewhere", func(t *testing.T) {
		pr := newProbe(t, hQPOptions{})
		pr.a.post(qp.SendWR{ID: 1, Opcode: qp.WRSend, Flags: qp.SendSignaled})
		pr.idle()
		p := pr.build(pr.ackHeaders(0, packet.SyndromeACKUnlimited), nil)
		p.path.Src = netipAP(mustAddr("10.9.9.9"), 0xC000)
		require.NoError(t, func() error { env := hEnvelope(&p.path); return env.PutICRC(p.buf) }())
		pr.h.flight = append(pr.h.flight, p)
		pr.idle()
		require.Empty(t, pr.a.pollSend())
		require.Equal(t, uint64(1), pr.a.d.count(counter.RcvdWrongPath), "path drops")
	})
}

// TestCompleterSQDrain checks that SQD finishes started WQEs, starts no new ones, and raises
// SQ_DRAINED when the last started one completes.
func TestCompleterSQDrain(t *testing.T) {
	pr := newProbe(t, hQPOptions{})
	pr.a.post(qp.SendWR{ID: 1, Opcode: qp.WRSend, Flags: qp.SendSignaled})
	pr.idle()
	require.NoError(t, pr.a.q.Modify(&qp.Attr{State: qp.StateSQD, EnSQDAsyncNotify: true}, qp.AttrState|qp.AttrEnSQDAsyncNotify))
	pr.a.post(qp.SendWR{ID: 2, Opcode: qp.WRSend, Flags: qp.SendSignaled})
	pr.idle()
	require.Len(t, pr.sent, 1, "packets in SQD")
	pr.respond(pr.ackHeaders(0, packet.SyndromeACKUnlimited), nil)
	require.Equal(t, []qp.EventType{qp.EventSQDrained}, pr.a.d.eventTypes(pr.a.q))
	require.NoError(t, pr.a.q.Modify(&qp.Attr{State: qp.StateRTS}, qp.AttrState))
	pr.idle()
	require.Len(t, pr.sent, 2, "packets after SQD->RTS")
	require.Equal(t, packet.PSN(1), pr.sent[1].h.BTH.PSN, "PSN after SQD->RTS")
}

// TestCompleterRNRMiddlePacket: an RNR NAK acknowledges every PSN before its own, so an RNR NAK
// for a middle packet of a SEND makes the requester resend from that packet, after the delay the
// NAK's timer code names, not from the start of the message.
func TestCompleterRNRMiddlePacket(t *testing.T) {
	pr := newProbe(t, hQPOptions{sqPSN: 10, mtu: qp.MTU1024, minRNRTimer: 20})
	buf := pr.a.d.region(4096, 0)
	pr.a.post(qp.SendWR{ID: 1, Opcode: qp.WRSend, Flags: qp.SendSignaled, SGList: []mr.SGE{buf.sge(0, 3000)}})
	pr.idle()
	pr.respond(pr.ackHeaders(11, packet.SyndromeRNRNAK(4)), nil)
	pr.h.advance(packet.RNRTimer(4))
	pr.idle()
	var psns []uint32
	for _, s := range pr.sent {
		psns = append(psns, uint32(s.h.BTH.PSN))
	}
	require.Equal(t, []uint32{10, 11, 12, 11, 12}, psns, "PSNs sent")
	require.Equal(t, packet.RNRTimer(4), time.Duration(pr.sent[3].at), "resent after the NAK's timer")
	pr.respond(pr.ackHeaders(12, packet.SyndromeACKUnlimited), nil)
	wcs := pr.a.pollSend()
	require.Len(t, wcs, 1)
	wantWC(t, wcs[0], 1, cq.WCSuccess, cq.OpcodeSend)
}

// TestCompleterRetryCountIsConsecutive: retry_cnt bounds consecutive timeouts; an acknowledgement
// that makes progress gives the next timeout the full count again.
func TestCompleterRetryCountIsConsecutive(t *testing.T) {
	pr := newProbe(t, hQPOptions{timeout: 14, retryCnt: 1, noRetryDflts: true, rnrRetry: 1, sqPSN: 10})
	period := ackTimeout(14)
	sig := qp.SendSignaled
	pr.a.post(qp.SendWR{ID: 1, Opcode: qp.WRSend, Flags: sig}, qp.SendWR{ID: 2, Opcode: qp.WRSend, Flags: sig})
	pr.idle()
	pr.h.advance(period)
	pr.idle() // the one retry: 10 and 11 again
	pr.respond(pr.ackHeaders(10, packet.SyndromeACKUnlimited), nil)
	pr.h.advance(period)
	pr.idle() // progress was made: 11 is retried once more instead of failing
	require.Len(t, pr.sent, 5)
	require.Equal(t, qp.StateRTS, pr.a.q.State())
	pr.h.advance(2 * period)
	pr.idle() // a second timeout in a row (backed off to 2 T): exhausted
	wcs := pr.a.pollSend()
	require.Len(t, wcs, 2)
	wantWC(t, wcs[0], 1, cq.WCSuccess, cq.OpcodeSend)
	wantWC(t, wcs[1], 2, cq.WCRetryExcErr, 0)
}

// TestCompleterTimerRestartsOnProgress: the retransmit timer runs from the last acknowledgement
// that made progress, not from the first transmission.
func TestCompleterTimerRestartsOnProgress(t *testing.T) {
	pr := newProbe(t, hQPOptions{timeout: 14, sqPSN: 10})
	period := ackTimeout(14)
	pr.a.post(qp.SendWR{ID: 1, Opcode: qp.WRSend}, qp.SendWR{ID: 2, Opcode: qp.WRSend})
	pr.idle()
	require.Equal(t, period, pr.a.e.Deadline().Sub(hStart), "deadline")
	pr.h.advance(period / 2)
	pr.respond(pr.ackHeaders(10, packet.SyndromeACKUnlimited), nil)
	require.Equal(t, period/2+period, pr.a.e.Deadline().Sub(hStart), "deadline after progress")
	// A stale copy of the same ACK is no progress and leaves the timer alone.
	pr.h.advance(period / 4)
	pr.respond(pr.ackHeaders(10, packet.SyndromeACKUnlimited), nil)
	require.Equal(t, period/2+period, pr.a.e.Deadline().Sub(hStart), "deadline after a stale ACK")
}

// TestCompleterReadImpliesEarlierAck: READ responses imply that every request before the READ was
// executed, so a SEND whose ACK was lost completes, in posting order, when the READ behind it is
// answered.
func TestCompleterReadImpliesEarlierAck(t *testing.T) {
	pr := newProbe(t, hQPOptions{sqPSN: 0xFFFFFF, mtu: qp.MTU1024})
	buf := pr.a.d.region(4096, 0)
	sig := qp.SendSignaled
	pr.a.post(qp.SendWR{ID: 1, Opcode: qp.WRSend, Flags: sig, SGList: []mr.SGE{buf.sge(0, 10)}},
		qp.SendWR{ID: 2, Opcode: qp.WRRDMARead, Flags: sig, SGList: []mr.SGE{buf.sge(100, 2000)}, RDMA: qp.RDMAInfo{RKey: 5}},
		qp.SendWR{ID: 3, Opcode: qp.WRSend, Flags: sig})
	pr.idle()
	pr.readResp(packet.RCRDMAReadResponseFirst, 0, make([]byte, 1024))
	pr.readResp(packet.RCRDMAReadResponseLast, 1, make([]byte, 976))
	wcs := pr.a.pollSend()
	require.Len(t, wcs, 2)
	wantWC(t, wcs[0], 1, cq.WCSuccess, cq.OpcodeSend)
	wantWC(t, wcs[1], 2, cq.WCSuccess, cq.OpcodeRDMARead)
}

// TestCompleterSendCQOverflow: a completion that finds the send CQ full moves the QP to ERR.
func TestCompleterSendCQOverflow(t *testing.T) {
	x := newE2E(t, hQPOptions{cqDepth: 2})
	for i := range 3 {
		x.b.postRecv(uint64(i), x.b.d.region(64, 0).sge(0, 64))
	}
	x.a.post(qp.SendWR{ID: 1, Opcode: qp.WRSend, Flags: qp.SendSignaled}, qp.SendWR{ID: 2, Opcode: qp.WRSend, Flags: qp.SendSignaled},
		qp.SendWR{ID: 3, Opcode: qp.WRSend, Flags: qp.SendSignaled})
	x.h.settle(time.Minute)
	require.Equal(t, qp.StateErr, x.a.q.State())
	require.Error(t, x.a.scq.Err(), "CQ error")
}
