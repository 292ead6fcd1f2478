package qp

import (
	"math/bits"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var allTypesList = []Type{TypeGSI, TypeRC, TypeUC, TypeUD}

// legalEdges lists every legal transition independently of the table's code, from the IBTA state
// diagram: any state but RESET to RESET and ERR, RESET to itself and INIT, and the forward path.
var legalEdges = map[[2]State]bool{
	{StateReset, StateReset}: true, {StateReset, StateInit}: true,
	{StateInit, StateInit}: true, {StateInit, StateRTR}: true,
	{StateRTR, StateRTS}: true, {StateRTS, StateRTS}: true, {StateRTS, StateSQD}: true,
	{StateSQD, StateSQD}: true, {StateSQD, StateRTS}: true, {StateSQE, StateRTS}: true,
	{StateErr, StateErr}: true,
}

func legal(from, to State) bool {
	return legalEdges[[2]State{from, to}] || (from != StateReset && (to == StateReset || to == StateErr))
}

// required is the table of facts: required attributes per transition and type.
func required(typ Type, from, to State) AttrMask {
	switch [2]State{from, to} {
	case [2]State{StateReset, StateInit}:
		switch typ {
		case TypeRC, TypeUC:
			return AttrPKeyIndex | AttrPort | AttrAccessFlags
		case TypeUD:
			return AttrPKeyIndex | AttrPort | AttrQKey
		case TypeGSI:
			return AttrPKeyIndex | AttrQKey
		}
	case [2]State{StateInit, StateRTR}:
		switch typ {
		case TypeRC:
			return AttrAV | AttrPathMTU | AttrDestQPN | AttrRQPSN | AttrMaxDestRdAtomic | AttrMinRNRTimer
		case TypeUC:
			return AttrAV | AttrPathMTU | AttrDestQPN | AttrRQPSN
		}
	case [2]State{StateRTR, StateRTS}:
		if typ == TypeRC {
			return AttrTimeout | AttrRetryCnt | AttrRNRRetry | AttrSQPSN | AttrMaxQPRdAtomic
		}
		return AttrSQPSN
	}
	return 0
}

// placeIn puts a fresh QP of type typ, in a fresh table (there is one GSI QP per table), into
// state s.
func placeIn(e *env, typ Type, s State) *QP {
	e = newEnv(e.t)
	q := e.qp(typ, defaultCaps())
	switch s {
	case StateReset:
	case StateSQE:
		if typ == TypeRC {
			return nil // RC never reaches SQE
		}
		e.to(q, StateRTS)
		q.EnterSQError()
	default:
		e.to(q, s)
	}
	require.Equal(e.t, s, q.State(), "placeIn %v", s)
	return q
}

// TestTransitionTableExhaustive tries every (type, from, to) with exactly the required attributes,
// then with each required attribute missing, and with each attribute outside req|opt added.
func TestTransitionTableExhaustive(t *testing.T) {
	for _, typ := range allTypesList {
		for from := range State(numStates) {
			for to := range State(numStates) {
				e := newEnv(t)
				if placeIn(e, typ, from) == nil {
					continue
				}
				name := typ.String() + "/" + from.String() + "->" + to.String()
				req := required(typ, from, to)
				if legal(from, to) {
					assert.Equal(t, req, transitions[from][to].req[typ], "%s: required attributes", name)
				}
				// Exactly the required set.
				q := placeIn(e, typ, from)
				a := fullAttr()
				a.State, a.CurState = to, from
				err := q.Modify(&a, AttrState|req)
				if !legal(from, to) {
					var me *ModifyError
					assert.ErrorIs(t, err, ErrInvalidTransition, "%s: illegal transition", name)
					if assert.ErrorAs(t, err, &me, "%s: illegal transition", name) {
						assert.Equal(t, from, me.From, "%s: illegal transition", name)
						assert.Equal(t, to, me.To, "%s: illegal transition", name)
					}
					assert.Equal(t, from, q.State(), "%s: state after an illegal transition", name)
					continue
				}
				if !assert.NoError(t, err, name) {
					continue
				}
				assert.Equal(t, to, q.State(), name)
				// Each required bit missing.
				for m := req; m != 0; m &= m - 1 {
					bit := AttrMask(1) << bits.TrailingZeros32(uint32(m))
					q := placeIn(e, typ, from)
					err := q.Modify(&a, AttrState|req&^bit)
					var me *ModifyError
					assert.ErrorIs(t, err, ErrMissingAttr, "%s without %v", name, bit)
					if assert.ErrorAs(t, err, &me, "%s without %v", name, bit) {
						assert.Equal(t, bit, me.Missing, "%s without %v", name, bit)
					}
				}
				// Each bit outside req|opt is rejected as extra.
				allowed := req | transitions[from][to].opt[typ] | AttrState
				for _, n := range attrMaskNames {
					if allowed&n.bit != 0 {
						continue
					}
					q := placeIn(e, typ, from)
					err := q.Modify(&a, AttrState|req|n.bit)
					var me *ModifyError
					assert.ErrorIs(t, err, ErrExtraAttr, "%s with extra %v", name, n.bit)
					if assert.ErrorAs(t, err, &me, "%s with extra %v", name, n.bit) {
						assert.Equal(t, n.bit, me.Extra, "%s with extra %v", name, n.bit)
					}
				}
			}
		}
	}
}

// TestOptionalAttributes checks the optional sets against the kernel table for a few cells and
// that every optional attribute except ALT_PATH is accepted.
func TestOptionalAttributes(t *testing.T) {
	cases := []struct {
		typ      Type
		from, to State
		opt      AttrMask
	}{
		{TypeRC, StateInit, StateRTR, AttrAltPath | AttrAccessFlags | AttrPKeyIndex},
		{TypeUC, StateInit, StateRTR, AttrAltPath | AttrAccessFlags | AttrPKeyIndex},
		{TypeUD, StateInit, StateRTR, AttrPKeyIndex | AttrQKey},
		{TypeGSI, StateInit, StateRTR, AttrPKeyIndex | AttrQKey},
		{TypeRC, StateRTR, StateRTS, AttrCurState | AttrAltPath | AttrAccessFlags | AttrMinRNRTimer | AttrPathMigState},
		{TypeUC, StateRTR, StateRTS, AttrCurState | AttrAltPath | AttrAccessFlags | AttrPathMigState},
		{TypeUD, StateRTR, StateRTS, AttrCurState | AttrQKey},
		{TypeRC, StateRTS, StateSQD, AttrEnSQDAsyncNotify},
		{TypeUD, StateSQE, StateRTS, AttrCurState | AttrQKey},
		{TypeUC, StateSQE, StateRTS, AttrCurState | AttrAccessFlags},
		{TypeRC, StateInit, StateInit, AttrPKeyIndex | AttrPort | AttrAccessFlags},
		{TypeUD, StateInit, StateInit, AttrPKeyIndex | AttrPort | AttrQKey},
	}
	for _, c := range cases {
		assert.Equal(t, c.opt, transitions[c.from][c.to].opt[c.typ], "%v %v->%v: optional attributes", c.typ, c.from, c.to)
		for m := c.opt; m != 0; m &= m - 1 {
			bit := AttrMask(1) << bits.TrailingZeros32(uint32(m))
			e := newEnv(t)
			q := placeIn(e, c.typ, c.from)
			a := fullAttr()
			a.State, a.CurState = c.to, c.from
			err := q.Modify(&a, AttrState|required(c.typ, c.from, c.to)|bit)
			if bit == AttrAltPath {
				assert.ErrorIs(t, err, ErrNotSupported, "%v %v->%v with ALT_PATH", c.typ, c.from, c.to)
				continue
			}
			assert.NoError(t, err, "%v %v->%v with optional %v", c.typ, c.from, c.to, bit)
		}
	}
}

func TestCurStateMismatch(t *testing.T) {
	e := newEnv(t)
	q := placeIn(e, TypeRC, StateRTS)
	a := Attr{State: StateRTS, CurState: StateSQD}
	require.ErrorIs(t, q.Modify(&a, AttrState|AttrCurState), ErrCurState, "mismatched cur_qp_state")
	a.CurState = StateRTS
	require.NoError(t, q.Modify(&a, AttrState|AttrCurState))
}

func TestModifyWithoutStateStaysPut(t *testing.T) {
	e := newEnv(t)
	q := placeIn(e, TypeRC, StateRTS)
	a := Attr{MinRNRTimer: 20}
	require.NoError(t, q.Modify(&a, AttrMinRNRTimer))
	got, _ := q.Query()
	require.Equal(t, StateRTS, got.State)
	require.Equal(t, uint8(20), got.MinRNRTimer)
	q2 := placeIn(e, TypeRC, StateRTR)
	require.ErrorIs(t, q2.Modify(&a, AttrMinRNRTimer), ErrInvalidTransition, "RTR->RTR")
}
