package gorxe

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nextEvent returns the next asynchronous event other than EventPortActive.
func nextEvent(t *testing.T, d *Device) AsyncEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		ev, err := d.GetAsyncEvent(ctx)
		require.NoError(t, err, "GetAsyncEvent")
		if ev.Type != EventPortActive {
			return ev
		}
	}
}

func TestEventCQErrOnOverflow(t *testing.T) {
	x := newTestQPs(t, newTestFabric(t).open(t, "10.0.0.1"))
	small, err := x.d.CreateCQ(2, nil)
	require.NoError(t, err)
	q, err := x.d.CreateQP(x.pd, &QPInitAttr{SendCQ: x.cq, RecvCQ: small, QPType: QPTypeRC, Cap: x.caps})
	require.NoError(t, err)
	q.Modify(&QPAttr{State: QPStateInit, PortNum: 1}, rcInitMask)
	for i := range 3 {
		require.NoError(t, q.PostRecv([]RecvWR{{ID: uint64(i)}}))
	}
	q.Modify(&QPAttr{State: QPStateErr}, QPAttrState)
	ev := nextEvent(t, x.d)
	assert.Equal(t, EventCQErr, ev.Type, "event %+v, want CQ error on the small CQ", ev)
	assert.Same(t, small, ev.CQ, "event %+v, want CQ error on the small CQ", ev)
	assert.ErrorIs(t, small.Err(), ErrCQOverflow, "CQ Err %v", small.Err())
}

func TestEventSQDrained(t *testing.T) {
	a, b := fabricPair(t)
	qa, _ := rcPair(t, a, b, MTU1024)
	require.NoError(t, qa.Modify(&QPAttr{State: QPStateSQD, EnSQDAsyncNotify: true}, QPAttrState|QPAttrEnSQDAsyncNotify))
	ev := nextEvent(t, a.d)
	assert.Equal(t, EventSQDrained, ev.Type, "event %+v, want SQ drained on the QP", ev)
	assert.Same(t, qa, ev.QP, "event %+v, want SQ drained on the QP", ev)
}

func TestEventSRQLimitReached(t *testing.T) {
	a, b := fabricPair(t)
	srq, err := b.d.CreateSRQ(b.pd, &SRQInitAttr{Attr: SRQAttr{MaxWR: 8, MaxSGE: 1}})
	require.NoError(t, err)
	qb, err := b.d.CreateQP(b.pd, &QPInitAttr{SendCQ: b.cq, RecvCQ: b.cq, SRQ: srq, QPType: QPTypeRC,
		Cap: QPCap{MaxSendWR: 4, MaxSendSGE: 1}})
	require.NoError(t, err)
	qa := a.qp(t, QPTypeRC)
	connectRC(t, qa, b.gid, qb.QPN(), 0, 0, MTU1024)
	connectRC(t, qb, a.gid, qa.QPN(), 0, 0, MTU1024)
	for i := range 4 {
		require.NoError(t, srq.PostRecv([]RecvWR{{ID: uint64(i), SGList: b.sge(i*64, 64)}}))
	}
	require.NoError(t, srq.Modify(&SRQAttr{SRQLimit: 4}, SRQLimit))
	require.NoError(t, qa.PostSend([]SendWR{{ID: 9, Opcode: WRSend, Flags: SendSignaled, SGList: a.sge(0, 10)}}))
	wc := b.wait(t, 1)[0]
	assert.Equal(t, WCSuccess, wc.Status, "receive through the SRQ: %+v", wc)
	assert.Equal(t, uint64(0), wc.WRID, "receive through the SRQ: %+v", wc)
	assert.Equal(t, qb.QPN(), wc.QPNum, "receive through the SRQ: %+v", wc)
	ev := nextEvent(t, b.d)
	assert.Equal(t, EventSRQLimitReached, ev.Type, "event %+v, want SRQ limit reached", ev)
	assert.Same(t, srq, ev.SRQ, "event %+v, want SRQ limit reached", ev)
	if a, _ := srq.Query(); a.SRQLimit != 0 {
		assert.Fail(t, fmt.Sprintf("the limit stays armed after firing: %+v", a))
	}
}

// TestQPEventHandler: a QP's EventHandler sees its events, and GetAsyncEvent still returns them.
// The receiving QP stays in RTR, so its first packet raises Communication Established.
func TestQPEventHandler(t *testing.T) {
	a, b := fabricPair(t)
	seen := make(chan AsyncEvent, 4)
	qb, err := b.d.CreateQP(b.pd, &QPInitAttr{SendCQ: b.cq, RecvCQ: b.cq, QPType: QPTypeRC,
		Cap:          QPCap{MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1},
		EventHandler: func(e AsyncEvent) { seen <- e }})
	require.NoError(t, err)
	qa := a.qp(t, QPTypeRC)
	connectRC(t, qa, b.gid, qb.QPN(), 0, 0, MTU1024)
	require.NoError(t, qb.Modify(&QPAttr{State: QPStateInit, PortNum: 1, AccessFlags: AccessRemoteWrite}, rcInitMask))
	require.NoError(t, qb.Modify(&QPAttr{State: QPStateRTR, PathMTU: MTU1024, DestQPNum: qa.QPN(), MaxDestRdAtomic: 1,
		MinRNRTimer: 12, AHAttr: AHAttr{IsGlobal: true, PortNum: 1, GRH: GlobalRoute{DGID: a.gid, SGIDIndex: 1, HopLimit: 1}}},
		rcRTRMask))
	require.NoError(t, qb.PostRecv([]RecvWR{{ID: 1, SGList: b.sge(0, 64)}}))
	require.NoError(t, qa.PostSend([]SendWR{{ID: 2, Opcode: WRSend, Flags: SendSignaled, SGList: a.sge(0, 10)}}))
	wc := b.wait(t, 1)[0]
	assert.Equal(t, WCSuccess, wc.Status, "receive in RTR: %+v", wc)

	e := <-seen
	assert.Equal(t, EventCommEst, e.Type, "handler: %v", e)
	assert.Same(t, qb, e.QP, "handler: %v", e)
	ev := nextEvent(t, b.d)
	assert.Equal(t, EventCommEst, ev.Type, "GetAsyncEvent: %v", ev)
	assert.Same(t, qb, ev.QP, "GetAsyncEvent: %v", ev)
}

// A context that is already done wins over queued events, as it does for a blocking wait.
func TestGetAsyncEventDoneContext(t *testing.T) {
	d := newTestFabric(t).open(t, "10.0.0.1") // Open queues EventPortActive
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ev, err := d.GetAsyncEvent(ctx)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, AsyncEvent{}, ev)
	assert.Equal(t, "no event", fmt.Sprint(ev), "a failed GetAsyncEvent's event must not read as a CQ error")

	ev, err = d.GetAsyncEvent(context.Background())
	require.NoError(t, err)
	assert.Equal(t, EventPortActive, ev.Type)
	assert.Equal(t, "port active (port 1)", fmt.Sprint(ev))
}
