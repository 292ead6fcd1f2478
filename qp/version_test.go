package qp

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// AttrVersion must move with every change Query can see and stay put otherwise, or the transport
// would act on stale attributes or re-read them on every packet.
func TestAttrVersionTracksQueryableChanges(t *testing.T) {
	e := newEnv(t)
	q := e.qp(TypeRC, defaultCaps())
	v := q.AttrVersion()
	step := func(what string, changes bool, f func()) {
		t.Helper()
		f()
		nv := q.AttrVersion()
		assert.Equal(t, changes, nv != v, "%s: version changed (%d -> %d)", what, v, nv)
		v = nv
	}
	step("Query", false, func() { q.Query() })
	step("RESET->INIT->RTR->RTS", true, func() { e.to(q, StateRTS) })
	step("PostSend", false, func() {
		require.NoError(t, postSend(q, []SendWR{validWR(e, TypeRC, WRSend)}))
	})
	step("Modify RTS->RTS", true, func() {
		require.NoError(t, q.Modify(&Attr{State: StateRTS, MinRNRTimer: 3}, AttrState|AttrMinRNRTimer))
	})
	step("EnterError", true, func() { q.EnterError() })
	step("EnterError again", false, func() { q.EnterError() })
}

// ResetCount must move on every entry into RESET and only then, so the transport can tell a
// reconnection with identical attributes from an untouched connection.
func TestResetCountMovesOnReset(t *testing.T) {
	e := newEnv(t)
	q := e.qp(TypeRC, defaultCaps())
	require.Equal(t, uint64(0), q.ResetCount(), "new QP")
	e.to(q, StateRTS)
	require.Equal(t, uint64(0), q.ResetCount(), "RESET->RTS")
	require.NoError(t, q.Modify(&Attr{State: StateReset}, AttrState))
	require.Equal(t, uint64(1), q.ResetCount(), "RTS->RESET")
	e.to(q, StateRTS)
	q.EnterError()
	require.Equal(t, uint64(1), q.ResetCount(), "RTS->ERR")
	require.NoError(t, q.Destroy())
	require.Equal(t, uint64(2), q.ResetCount(), "Destroy")
}
