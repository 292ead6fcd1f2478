package qp

import "testing"

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
		if (nv != v) != changes {
			t.Errorf("%s: version %d -> %d, want changed=%v", what, v, nv, changes)
		}
		v = nv
	}
	step("Query", false, func() { q.Query() })
	step("RESET->INIT->RTR->RTS", true, func() { e.to(q, StateRTS) })
	step("PostSend", false, func() {
		if err := q.PostSend([]SendWR{validWR(e, TypeRC, WRSend)}); err != nil {
			t.Fatal(err)
		}
	})
	step("Modify RTS->RTS", true, func() {
		if err := q.Modify(&Attr{State: StateRTS, MinRNRTimer: 3}, AttrState|AttrMinRNRTimer); err != nil {
			t.Fatal(err)
		}
	})
	step("EnterError", true, func() { q.EnterError() })
	step("EnterError again", false, func() { q.EnterError() })
}

// ResetCount must move on every entry into RESET and only then, so the transport can tell a
// reconnection with identical attributes from an untouched connection.
func TestResetCountMovesOnReset(t *testing.T) {
	e := newEnv(t)
	q := e.qp(TypeRC, defaultCaps())
	if q.ResetCount() != 0 {
		t.Fatalf("new QP: ResetCount %d", q.ResetCount())
	}
	e.to(q, StateRTS)
	if q.ResetCount() != 0 {
		t.Fatalf("RESET->RTS: ResetCount %d", q.ResetCount())
	}
	if err := q.Modify(&Attr{State: StateReset}, AttrState); err != nil {
		t.Fatal(err)
	}
	if q.ResetCount() != 1 {
		t.Fatalf("RTS->RESET: ResetCount %d", q.ResetCount())
	}
	e.to(q, StateRTS)
	q.EnterError()
	if q.ResetCount() != 1 {
		t.Fatalf("RTS->ERR: ResetCount %d", q.ResetCount())
	}
	if err := q.Destroy(); err != nil {
		t.Fatal(err)
	}
	if q.ResetCount() != 2 {
		t.Fatalf("Destroy: ResetCount %d", q.ResetCount())
	}
}
