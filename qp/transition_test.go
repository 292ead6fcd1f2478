package qp

import (
	"errors"
	"math/bits"
	"testing"
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
	if q.State() != s {
		e.t.Fatalf("placeIn %v: QP in %v", s, q.State())
	}
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
				if got := transitions[from][to].req[typ]; legal(from, to) && got != req {
					t.Errorf("%s: table requires %v, facts say %v", name, got, req)
				}
				// Exactly the required set.
				q := placeIn(e, typ, from)
				a := fullAttr()
				a.State, a.CurState = to, from
				err := q.Modify(&a, AttrState|req)
				if !legal(from, to) {
					var me *ModifyError
					if !errors.Is(err, ErrInvalidTransition) || !errors.As(err, &me) || me.From != from || me.To != to {
						t.Errorf("%s: illegal transition gave %v", name, err)
					}
					if q.State() != from {
						t.Errorf("%s: state changed to %v", name, q.State())
					}
					continue
				}
				if err != nil {
					t.Errorf("%s: %v", name, err)
					continue
				}
				if q.State() != to {
					t.Errorf("%s: state is %v", name, q.State())
				}
				// Each required bit missing.
				for m := req; m != 0; m &= m - 1 {
					bit := AttrMask(1) << bits.TrailingZeros32(uint32(m))
					q := placeIn(e, typ, from)
					err := q.Modify(&a, AttrState|req&^bit)
					var me *ModifyError
					if !errors.Is(err, ErrMissingAttr) || !errors.As(err, &me) || me.Missing != bit {
						t.Errorf("%s without %v: %v", name, bit, err)
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
					if !errors.Is(err, ErrExtraAttr) || !errors.As(err, &me) || me.Extra != n.bit {
						t.Errorf("%s with extra %v: %v", name, n.bit, err)
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
		if got := transitions[c.from][c.to].opt[c.typ]; got != c.opt {
			t.Errorf("%v %v->%v: optional %v, want %v", c.typ, c.from, c.to, got, c.opt)
		}
		for m := c.opt; m != 0; m &= m - 1 {
			bit := AttrMask(1) << bits.TrailingZeros32(uint32(m))
			e := newEnv(t)
			q := placeIn(e, c.typ, c.from)
			a := fullAttr()
			a.State, a.CurState = c.to, c.from
			err := q.Modify(&a, AttrState|required(c.typ, c.from, c.to)|bit)
			if bit == AttrAltPath {
				if !errors.Is(err, ErrNotSupported) {
					t.Errorf("%v %v->%v with ALT_PATH: %v", c.typ, c.from, c.to, err)
				}
				continue
			}
			if err != nil {
				t.Errorf("%v %v->%v with optional %v: %v", c.typ, c.from, c.to, bit, err)
			}
		}
	}
}

func TestCurStateMismatch(t *testing.T) {
	e := newEnv(t)
	q := placeIn(e, TypeRC, StateRTS)
	a := Attr{State: StateRTS, CurState: StateSQD}
	if err := q.Modify(&a, AttrState|AttrCurState); !errors.Is(err, ErrCurState) {
		t.Fatalf("mismatched cur_qp_state: %v", err)
	}
	a.CurState = StateRTS
	if err := q.Modify(&a, AttrState|AttrCurState); err != nil {
		t.Fatal(err)
	}
}

func TestModifyWithoutStateStaysPut(t *testing.T) {
	e := newEnv(t)
	q := placeIn(e, TypeRC, StateRTS)
	a := Attr{MinRNRTimer: 20}
	if err := q.Modify(&a, AttrMinRNRTimer); err != nil {
		t.Fatal(err)
	}
	got, _ := q.Query()
	if got.State != StateRTS || got.MinRNRTimer != 20 {
		t.Fatalf("state %v timer %d", got.State, got.MinRNRTimer)
	}
	q2 := placeIn(e, TypeRC, StateRTR)
	if err := q2.Modify(&a, AttrMinRNRTimer); !errors.Is(err, ErrInvalidTransition) {
		t.Fatalf("RTR->RTR: %v", err)
	}
}
