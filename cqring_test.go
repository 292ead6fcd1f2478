package gorxe

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A CQ on a ring is polled from its ring by a consumer that never calls the CQ: here a SEND's
// completions (three unsignaled sends retired by a fourth, signaled one) arrive there with the
// slots their poll frees, and the consumer's arm fires the channel's event.
func TestCQOnRing(t *testing.T) {
	a, b := fabricPair(t)
	ring := CQRing{Header: new(CQRingHeader), Entries: make([]CQRingEntry, 8)}
	rcq, err := a.d.CreateCQOnRing(ring, a.ch)
	require.NoError(t, err)
	assert.Equal(t, 8, rcq.CQE())
	qa, err := a.d.CreateQP(a.pd, &QPInitAttr{SendCQ: rcq, RecvCQ: a.cq, QPType: QPTypeRC,
		Cap: QPCap{MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}})
	require.NoError(t, err)
	qb := b.qp(t, QPTypeRC)
	connectRC(t, qa, b.gid, qb.QPN(), 0x100, 0x200, MTU1024)
	connectRC(t, qb, a.gid, qa.QPN(), 0x200, 0x100, MTU1024)

	ring.Header.Notify.Store(1) // what ibv_req_notify_cq(cq, 0) stores
	for i := range 4 {
		require.NoError(t, qb.PostRecv([]RecvWR{{ID: uint64(i), SGList: b.sge(i*64, 64)}}))
	}
	wrs := make([]SendWR, 4)
	for i := range wrs {
		wrs[i] = SendWR{ID: uint64(10 + i), Opcode: WRSend, SGList: a.sge(0, 16)}
	}
	wrs[3].Flags = SendSignaled
	require.NoError(t, qa.PostSend(wrs))
	b.wait(t, 4)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got, err := a.ch.GetEvent(ctx)
	require.NoError(t, err)
	assert.Same(t, rcq, got)
	require.NoError(t, got.AckEvents(1))
	require.Equal(t, uint64(1), ring.Header.Tail.Load(), "one completion in the ring")
	e := ring.Entries[0]
	assert.Equal(t, uint64(13), e.WC.WRID)
	assert.Equal(t, WCSuccess, e.WC.Status)
	assert.Equal(t, WCSend, e.WC.Opcode)
	assert.Equal(t, qa.QPN(), e.WC.QPNum)
	assert.Equal(t, uint32(4), e.Slots, "the signaled send retires the three unsignaled ones")
	assert.Equal(t, uint32(0), ring.Header.Notify.Load(), "the event disarmed the CQ")
	ring.Header.Head.Store(1)
	assert.Zero(t, rcq.Poll(make([]WC, 4)), "consumed")

	assert.ErrorIs(t, rcq.Resize(16), ErrInvalidCQSize)
	bigger := CQRing{Header: new(CQRingHeader), Entries: make([]CQRingEntry, 16)}
	require.NoError(t, rcq.ResizeRing(bigger))
	assert.Equal(t, 16, rcq.CQE())
	require.NoError(t, qa.Destroy())
	require.NoError(t, rcq.Destroy())
}
