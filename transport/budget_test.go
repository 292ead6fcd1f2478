package transport

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

// admitRun gives the probe's requester its turn and runs it, as the stack does for a QP at the
// head of its budget queue.
func (pr *probe) admitRun() {
	pr.a.e.Admit()
	pr.a.e.Run(pr.h.now, &pr.a.d.out)
	pr.h.collect(pr.a.d)
	pr.h.drain()
}

// postWrite posts one signaled WRITE of n packets at MTU 256.
func (pr *probe) postWrite(id uint64, n int) {
	src := pr.a.d.region(n*256, 0)
	pr.a.post(qp.SendWR{ID: id, Opcode: qp.WRRDMAWrite, Flags: qp.SendSignaled, SGList: []mr.SGE{src.sge(0, n*256)}, RDMA: qp.RDMAInfo{RemoteAddr: 0, RKey: 1}})
	pr.idle()
}

// Two RC QPs share a budget of 100 packets. The first sends its whole window (the bound is
// checked when a requester starts, so a run stays one batch); the second then waits until it is
// admitted, and the first, though acknowledged, does not jump the queue.
func TestSendBudgetQueuesQPs(t *testing.T) {
	b := &SendBudget{Packets: 100}
	p1 := newProbe(t, hQPOptions{mtu: qp.MTU256, sqPSN: 0})
	p2 := newProbe(t, hQPOptions{mtu: qp.MTU256, sqPSN: 0})
	p1.a.e.SetSendBudget(b)
	p2.a.e.SetSendBudget(b)

	p1.postWrite(1, 300)
	require.Len(t, p1.sent, 128)
	assert.Equal(t, 128, b.Used())
	assert.False(t, p1.a.e.Starved())

	p2.postWrite(2, 4)
	assert.Empty(t, p2.sent)
	assert.True(t, p2.a.e.Starved())

	// An ACK for 64 makes room, but p2 waits for it: p1 sends nothing and queues behind p2.
	p1.respond(p1.ackHeaders(packet.PSN(63), packet.SyndromeACKUnlimited), nil)
	assert.Len(t, p1.sent, 128)
	assert.Equal(t, 64, b.Used())
	assert.True(t, p1.a.e.Starved())

	p2.admitRun()
	require.Len(t, p2.sent, 4)
	assert.False(t, p2.a.e.Starved())
	assert.Equal(t, 68, b.Used())

	p1.admitRun()
	assert.Len(t, p1.sent, 192)
	assert.Equal(t, 132, b.Used())

	// Retransmissions are charged already and never held: a timeout resends p2's packets
	// although the budget is over its bound.
	p2.h.advance(p2.a.e.Deadline().Sub(p2.h.now))
	p2.idle()
	assert.Greater(t, len(p2.sent), 4)

	p1.a.e.ReleaseSendBudget()
	p2.a.e.ReleaseSendBudget()
	assert.Zero(t, b.Used())
}

// The byte bound divides by the path MTU, and a QP that leaves RTS gives its charge back.
func TestSendBudgetBytesAndError(t *testing.T) {
	b := &SendBudget{Bytes: 10 * 256}
	assert.True(t, b.Room(256))
	p := newProbe(t, hQPOptions{mtu: qp.MTU256, sqPSN: 0})
	p.a.e.SetSendBudget(b)
	p.postWrite(1, 20)
	require.Len(t, p.sent, 20)
	assert.False(t, b.Room(256))
	require.NoError(t, p.a.q.Modify(&qp.Attr{State: qp.StateErr}, qp.AttrState))
	p.idle()
	assert.Zero(t, b.Used())
}
