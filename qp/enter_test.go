package qp

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// EnterError and EnterSQError report the state they moved the QP out of, so the transport can
// report the change; a QP they leave alone reports no move.
func TestEnterErrorReportsTheChange(t *testing.T) {
	e := newEnv(t)
	rc := e.qp(TypeRC, defaultCaps())
	e.to(rc, StateRTS)
	from, moved := rc.EnterSQError()
	assert.Equal(t, StateRTS, from, "RC has no SQE: ERR from RTS")
	assert.True(t, moved)
	from, moved = rc.EnterError()
	assert.Equal(t, StateErr, from)
	assert.False(t, moved, "already in ERR")

	ud := e.qp(TypeUD, defaultCaps())
	e.to(ud, StateRTS)
	from, moved = ud.EnterSQError()
	assert.Equal(t, StateRTS, from)
	assert.True(t, moved)
	assert.Equal(t, StateSQE, ud.State())
	_, moved = ud.EnterSQError()
	assert.False(t, moved, "already in SQE")

	fresh := e.qp(TypeUC, defaultCaps())
	from, moved = fresh.EnterError()
	assert.Equal(t, StateReset, from)
	assert.False(t, moved, "RESET stays RESET")
}
