package transport

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

// An unanswered request reports each retransmit timeout with the retries left after it, then the
// completion error and the QP error that end it.
func TestEventsRetryExhaustion(t *testing.T) {
	pr := newProbe(t, hQPOptions{retryCnt: 2, noRetryDflts: true, sqPSN: 50})
	pr.a.d.out.Want = AllEvents
	pr.a.post(qp.SendWR{ID: 1, Opcode: qp.WRSend, Flags: qp.SendSignaled})
	pr.h.runUntil(func() bool { return pr.a.scq.Len() > 0 }, time.Hour)

	qpn := pr.a.q.QPN()
	assert.Equal(t, []Event{
		{Kind: EventRetryTimeout, QPN: qpn, PSN: 50, RetriesLeft: 1},
		{Kind: EventRetryTimeout, QPN: qpn, PSN: 50, RetriesLeft: 0},
		{Kind: EventCompletionError, QPN: qpn, Status: cq.WCRetryExcErr, Opcode: cq.OpcodeSend, WRID: 1},
		{Kind: EventQPError, QPN: qpn, From: qp.StateRTS, To: qp.StateErr, Status: cq.WCRetryExcErr},
	}, pr.a.d.reported)
}

// RNR NAKs are reported as received, each RNR timer expiry with the RNR retries left after it,
// and the RNR NAK that finds none left as the completion error.
func TestEventsRNRTimeout(t *testing.T) {
	pr := newProbe(t, hQPOptions{rnrRetry: 2, noRetryDflts: true, retryCnt: 7, timeout: 31})
	pr.a.d.out.Want = AllEvents
	rnrAuto(pr, 1, 1000)
	pr.a.post(qp.SendWR{ID: 1, Opcode: qp.WRSend})
	pr.h.runUntil(func() bool { return pr.a.scq.Len() > 0 }, time.Hour)

	qpn := pr.a.q.QPN()
	nak := Event{Kind: EventNAKReceived, QPN: qpn, PSN: 0, Syndrome: packet.SyndromeRNRNAK(1)}
	assert.Equal(t, []Event{
		nak,
		{Kind: EventRNRTimeout, QPN: qpn, PSN: 0, RetriesLeft: 1},
		nak,
		{Kind: EventRNRTimeout, QPN: qpn, PSN: 0, RetriesLeft: 0},
		nak,
		{Kind: EventCompletionError, QPN: qpn, Status: cq.WCRNRRetryExcErr, Opcode: cq.OpcodeSend, WRID: 1},
		{Kind: EventQPError, QPN: qpn, From: qp.StateRTS, To: qp.StateErr, Status: cq.WCRNRRetryExcErr},
	}, pr.a.d.reported)
}

// rnr_retry 7 never runs out: every RNR timeout reports 7 left.
func TestEventsRNRUnlimited(t *testing.T) {
	pr := newProbe(t, hQPOptions{rnrRetry: 7})
	pr.a.d.out.Want = EventRNRTimeout.Mask()
	rnrAuto(pr, 2, 3)
	pr.a.post(qp.SendWR{ID: 1, Opcode: qp.WRSend, Flags: qp.SendSignaled})
	pr.h.settle(time.Hour)

	require.Len(t, pr.a.d.reported, 3)
	for _, ev := range pr.a.d.reported {
		assert.Equal(t, Event{Kind: EventRNRTimeout, QPN: pr.a.q.QPN(), RetriesLeft: 7}, ev)
	}
}

// A lost packet makes the responder send a PSN sequence error NAK once, which the requester
// reports as received; the retransmission then succeeds without further events.
func TestEventsSequenceErrorNAK(t *testing.T) {
	x := newE2E(t, hQPOptions{})
	x.a.d.out.Want, x.b.d.out.Want = AllEvents, AllEvents
	dropped := false
	x.h.tap = func(p *hPacket, parsed *packet.Parsed) bool {
		if !dropped && p.path.Src.Addr() == x.a.d.addr && parsed.BTH().PSN() == 0 {
			dropped = true
			return false
		}
		return true
	}
	wc := x.one(qp.SendWR{ID: 1, Opcode: qp.WRRDMAWrite, SGList: []mr.SGE{x.aBuf.sge(0, 3000)},
		RDMA: qp.RDMAInfo{RemoteAddr: x.bBuf.mr.IOVA(), RKey: x.bBuf.mr.RKey()}})
	wantWC(t, wc, 1, cq.WCSuccess, cq.OpcodeRDMAWrite)

	seq := packet.SyndromeNAKPSNSequenceError
	assert.Equal(t, []Event{{Kind: EventNAKSent, QPN: x.b.q.QPN(), PSN: 0, Syndrome: seq}}, x.b.d.reported)
	assert.Equal(t, []Event{{Kind: EventNAKReceived, QPN: x.a.q.QPN(), PSN: 0, Syndrome: seq}}, x.a.d.reported)
}

// A remote access error moves both QPs to ERR: the responder reports the NAK it sent and its QP
// error, the requester the NAK it received, the completion error and its QP error.
func TestEventsRemoteAccessError(t *testing.T) {
	x := newE2E(t, hQPOptions{})
	x.a.d.out.Want, x.b.d.out.Want = AllEvents, AllEvents
	wc := x.one(qp.SendWR{ID: 7, Opcode: qp.WRRDMAWrite, SGList: []mr.SGE{x.aBuf.sge(0, 200)},
		RDMA: qp.RDMAInfo{RemoteAddr: x.bBuf.mr.IOVA() + e2eSize - 100, RKey: x.bBuf.mr.RKey()}})
	wantWC(t, wc, 7, cq.WCRemAccessErr, 0)

	acc := packet.SyndromeNAKRemoteAccessError
	b, a := x.b.q.QPN(), x.a.q.QPN()
	assert.Equal(t, []Event{
		{Kind: EventNAKSent, QPN: b, PSN: 0, Syndrome: acc},
		{Kind: EventQPError, QPN: b, From: qp.StateRTS, To: qp.StateErr, Status: cq.WCRemAccessErr},
	}, x.b.d.reported)
	assert.Equal(t, []Event{
		{Kind: EventNAKReceived, QPN: a, PSN: 0, Syndrome: acc},
		{Kind: EventCompletionError, QPN: a, Status: cq.WCRemAccessErr, Opcode: cq.OpcodeRDMAWrite, WRID: 7},
		{Kind: EventQPError, QPN: a, From: qp.StateRTS, To: qp.StateErr, Status: cq.WCRemAccessErr},
	}, x.a.d.reported)
}

// A receive that finds its buffer too small completes in error on the receive queue, and the
// responder's QP error names the status. The NAK is built first; the completion and the move to
// ERR are one step.
func TestEventsReceiveCompletionError(t *testing.T) {
	x := newE2E(t, hQPOptions{})
	x.b.d.out.Want = AllEvents
	x.b.postRecv(9, x.bBuf.sge(0, 10))
	x.one(qp.SendWR{ID: 1, Opcode: qp.WRSend, SGList: []mr.SGE{x.aBuf.sge(0, 100)}})

	b := x.b.q.QPN()
	assert.Equal(t, []Event{
		{Kind: EventNAKSent, QPN: b, PSN: 0, Syndrome: packet.SyndromeNAKInvalidRequest},
		{Kind: EventCompletionError, QPN: b, Status: cq.WCLocLenErr, Opcode: cq.OpcodeRecv, WRID: 9, Recv: true},
		{Kind: EventQPError, QPN: b, From: qp.StateRTS, To: qp.StateErr, Status: cq.WCLocLenErr},
	}, x.b.d.reported)
}

// A UC send that fails locally moves the QP to SQE, not ERR; the flush of the WQE behind it is
// not reported.
func TestEventsSendQueueError(t *testing.T) {
	x := newE2E(t, hQPOptions{typ: qp.TypeUC})
	x.a.d.out.Want = AllEvents
	bad := x.aBuf.sge(0, 100)
	bad.LKey = 0
	x.a.post(qp.SendWR{ID: 5, Opcode: qp.WRSend, SGList: []mr.SGE{bad}}, qp.SendWR{ID: 6, Opcode: qp.WRSend})
	x.h.settle(time.Second)

	a := x.a.q.QPN()
	assert.Equal(t, []Event{
		{Kind: EventCompletionError, QPN: a, Status: cq.WCLocProtErr, Opcode: cq.OpcodeSend, WRID: 5},
		{Kind: EventQPError, QPN: a, From: qp.StateRTS, To: qp.StateSQE, Status: cq.WCLocProtErr},
	}, x.a.d.reported)
}

// The engine records only the kinds the caller asks for, and nothing when it asks for none.
func TestEventsOnlyWhatIsWanted(t *testing.T) {
	for _, want := range []EventMask{0, EventQPError.Mask()} {
		pr := newProbe(t, hQPOptions{retryCnt: 1, noRetryDflts: true})
		pr.a.d.out.Want = want
		pr.a.post(qp.SendWR{ID: 1, Opcode: qp.WRSend})
		pr.h.runUntil(func() bool { return pr.a.scq.Len() > 0 }, time.Hour)
		for _, ev := range pr.a.d.reported {
			assert.True(t, want.Has(ev.Kind), "mask %b: %v recorded", want, ev.Kind)
		}
		assert.Len(t, pr.a.d.reported, map[EventMask]int{0: 0, EventQPError.Mask(): 1}[want])
	}
}

func TestEventMask(t *testing.T) {
	for k := EventKind(1); k < NumEventKinds; k++ {
		assert.True(t, AllEvents.Has(k), "%v", k)
		assert.NotEqual(t, "unknown", k.String())
	}
	assert.False(t, AllEvents.Has(0))
	assert.False(t, AllEvents.Has(NumEventKinds))
}

// Recording events costs no allocation once the list has grown: a responder without receive
// WQEs answers every SEND with an RNR NAK and reports each one.
func TestEventsAllocs(t *testing.T) {
	env := newRspEnv(t, rspOptions{access: rcAccess, maxDestRd: 1})
	env.out.Want = AllEvents
	p := env.req(packet.RCSendOnly, 0, true, rspPattern(100, 1), nil)
	rspAllocs(t, env, func() {
		env.out.Reset()
		env.out.ResetEvents()
		env.e.Receive(env.now, p, env.from, &env.out)
		if len(env.out.Packets) != 1 || len(env.out.Events) != 1 || env.out.Events[0].Kind != EventNAKSent {
			t.Fatal("SEND without a receive WQE not RNR NAKed and reported")
		}
	})
}
