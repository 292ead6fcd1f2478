package qp

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cq"
)

// SendQueue.Fail completes the failed WQE with its status, flushes the ones behind it after it,
// and moves RC to ERR and UD to SQE; a stale position changes nothing.
func TestFailSend(t *testing.T) {
	for _, tc := range []struct {
		typ Type
		to  State
	}{{TypeRC, StateErr}, {TypeUD, StateSQE}} {
		t.Run(tc.typ.String(), func(t *testing.T) {
			e := newEnv(t)
			q := e.qp(tc.typ, defaultCaps())
			e.to(q, StateRTS)
			wrs := []SendWR{validWR(e, tc.typ, WRSend), validWR(e, tc.typ, WRSend)}
			wrs[0].ID, wrs[1].ID = 7, 8
			wrs[1].Flags = 0
			require.NoError(t, postSend(q, wrs))
			sq := q.SendQueue()
			w, ok := sq.StartNext()
			require.True(t, ok)

			_, moved, err := sq.Fail(w.Index+1, cq.WCRemAccessErr)
			assert.ErrorIs(t, err, ErrStale, "not the head")
			assert.False(t, moved)
			assert.Equal(t, StateRTS, q.State())

			from, moved, err := sq.Fail(w.Index, cq.WCRemAccessErr)
			require.NoError(t, err)
			assert.Equal(t, StateRTS, from)
			assert.True(t, moved)
			assert.Equal(t, tc.to, q.State())
			wcs := poll(q.SendCQ())
			require.Len(t, wcs, 2)
			assert.Equal(t, []uint64{7, 8}, ids(wcs))
			assert.Equal(t, []cq.Status{cq.WCRemAccessErr, cq.WCWRFlushErr}, []cq.Status{wcs[0].Status, wcs[1].Status})
		})
	}
}

// Whoever polls the error completion of a failed WQE and then reads the QP's state finds it out of
// RTS: the completion and the state change are one step. (Completing first and moving the QP after
// left a window in which a poller saw the error WC with the QP still in RTS.)
func TestFailIsOneStepForAPoller(t *testing.T) {
	e := newEnv(t)
	for range 300 {
		q := e.qp(TypeRC, defaultCaps())
		e.to(q, StateRTS)
		require.NoError(t, postSend(q, []SendWR{validWR(e, TypeRC, WRSend)}))
		w, _ := q.SendQueue().StartNext()

		seen := stateOnCompletion(q, q.SendCQ())
		_, _, err := q.SendQueue().Fail(w.Index, cq.WCRemAccessErr)
		require.NoError(t, err)
		require.Equal(t, StateErr, <-seen, "state seen after polling the send error")
		require.NoError(t, q.Destroy())

		q = e.qp(TypeRC, defaultCaps())
		e.to(q, StateRTS)
		require.NoError(t, q.PostRecv([]RecvWR{{ID: 2}}))
		var rw RecvWQE
		require.True(t, q.PopRecv(&rw))
		seen = stateOnCompletion(q, q.RecvCQ())
		_, _, err = q.FailRecv(&rw, &cq.WC{Status: cq.WCLocLenErr, Opcode: cq.OpcodeRecv})
		require.NoError(t, err)
		require.Equal(t, StateErr, <-seen, "state seen after polling the receive error")
		require.NoError(t, q.Destroy())
	}
}

// stateOnCompletion polls c from another goroutine and sends q's state as soon as a completion
// arrives.
func stateOnCompletion(q *QP, c *cq.CQ) <-chan State {
	seen := make(chan State)
	go func() {
		wc := make([]cq.WC, 1)
		for c.Poll(wc) == 0 {
			runtime.Gosched()
		}
		seen <- q.State()
	}()
	return seen
}
