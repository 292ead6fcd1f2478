package gorxe

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/counter"
)

// TestQPCounters checks that a device enumerates its live QPs' counters in QPN order, that they
// match QP.Counters, and that a destroyed QP leaves the enumeration but not the device's totals.
func TestQPCounters(t *testing.T) {
	a, b := fabricPair(t)
	qa, qb := rcPair(t, a, b, MTU1024)
	idle := a.qp(t, QPTypeUD)
	require.NoError(t, qb.PostRecv([]RecvWR{{ID: 1, SGList: b.sge(0, 64)}}))
	require.NoError(t, qa.PostSend([]SendWR{{ID: 2, Opcode: WRSend, Flags: SendSignaled, SGList: a.sge(0, 40)}}))
	a.wait(t, 1)
	b.wait(t, 1)

	var qpns []uint32
	for qpn, c := range a.d.QPCounters() {
		qpns = append(qpns, qpn)
		if qpn == qa.QPN() {
			assert.Equal(t, qa.Counters(), c)
			assert.Equal(t, uint64(40), c.Get(counter.SentBytes))
			assert.Equal(t, uint64(1), c.Get(counter.RDMASends))
		} else {
			assert.Zero(t, c.Get(counter.SentPkts), "QP %#x had no traffic", qpn)
		}
	}
	assert.Equal(t, []uint32{qa.QPN(), idle.QPN()}, qpns)

	require.NoError(t, qa.Destroy())
	qpns = qpns[:0]
	for qpn := range a.d.QPCounters() {
		qpns = append(qpns, qpn)
	}
	assert.Equal(t, []uint32{idle.QPN()}, qpns)
	assert.Equal(t, uint64(40), a.d.Counters().Get(counter.SentBytes), "a destroyed QP's counters stay in the device's")

	for range a.d.QPCounters() {
		break // stopping early is allowed
	}
}
