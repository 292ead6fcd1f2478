package gorxe

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// nextEvent returns the next asynchronous event other than EventPortActive.
func nextEvent(t *testing.T, d *Device) AsyncEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		ev, err := d.GetAsyncEvent(ctx)
		if err != nil {
			t.Fatalf("GetAsyncEvent: %v", err)
		}
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
	if ev.Type != EventCQErr || ev.CQ != small {
		t.Errorf("event %+v, want CQ error on the small CQ", ev)
	}
	if !errors.Is(small.Err(), ErrCQOverflow) {
		t.Errorf("CQ Err %v", small.Err())
	}
}

func TestEventSQDrained(t *testing.T) {
	a, b := fabricPair(t)
	qa, _ := rcPair(t, a, b, MTU1024)
	require.NoError(t, qa.Modify(&QPAttr{State: QPStateSQD, EnSQDAsyncNotify: true}, QPAttrState|QPAttrEnSQDAsyncNotify))
	if ev := nextEvent(t, a.d); ev.Type != EventSQDrained || ev.QP != qa {
		t.Errorf("event %+v, want SQ drained on the QP", ev)
	}
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
	if wc := b.wait(t, 1)[0]; wc.Status != WCSuccess || wc.WRID != 0 || wc.QPNum != qb.QPN() {
		t.Errorf("receive through the SRQ: %+v", wc)
	}
	if ev := nextEvent(t, b.d); ev.Type != EventSRQLimitReached || ev.SRQ != srq {
		t.Errorf("event %+v, want SRQ limit reached", ev)
	}
	if a, _ := srq.Query(); a.SRQLimit != 0 {
		t.Errorf("the limit stays armed after firing: %+v", a)
	}
}
