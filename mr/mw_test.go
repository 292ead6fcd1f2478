package mr

import (
	"errors"
	"testing"
)

func TestMWType1BindRebindUnbind(t *testing.T) {
	e := newEnv(t)
	buf := pattern(make([]byte, 8192), 3)
	base := uint64(addrOf(buf))
	a := e.reg(t, buf, AccessLocalWrite|AccessMWBind)
	b := e.reg(t, buf, AccessLocalWrite|AccessMWBind)
	w, err := e.t.AllocMW(e.pd, MWType1)
	noErr(t, err)
	eq(t, MWType1, w.Type())
	k0 := w.RKey()
	k1 := IncKey(k0)
	noErr(t, e.t.BindMW(e.pd, 1, &Bind{MWKey: k0, NewKey: k1, MRKey: a.LKey(), Addr: base + 10, Length: 20, Access: AccessRemoteRead}))
	eq(t, k1, w.RKey())
	check(t, w.Bound())
	got, err := readAll(t, e.t, k1, e.pd, 3, base+10, 20)
	noErr(t, err)
	eq(t, string(buf[10:30]), string(got))
	_, err = readAll(t, e.t, k0, e.pd, 3, base+10, 1)
	isErr(t, err, ErrKeyInvalid)

	// Dereg of a region with a bound window fails with a typed error.
	err = a.DeregMR()
	isErr(t, err, ErrMWBound)
	var me *Error
	check(t, errors.As(err, &me), "want *Error")
	eq(t, "dereg_mr", me.Op)
	eq(t, a.LKey(), me.Key)
	isErr(t, a.ReregMR(ReregChangeAccess, nil, nil, AccessMWBind), ErrMWBound)

	// Rebinding to another region moves the binding.
	k2 := IncKey(k1)
	noErr(t, e.t.BindMW(e.pd, 1, &Bind{MWKey: k1, NewKey: k2, MRKey: b.LKey(), Addr: base, Length: 8192, Access: AccessRemoteWrite}))
	noErr(t, a.DeregMR())
	isErr(t, b.DeregMR(), ErrMWBound)
	// Type 1 windows are not invalidated; they are unbound with a zero-length bind.
	isErr(t, e.t.LocalInvalidate(e.pd, 1, k2), ErrMWType)
	isErr(t, e.t.RemoteInvalidate(e.pd, 1, k2), ErrMWType)
	k3 := IncKey(k2)
	noErr(t, e.t.BindMW(e.pd, 1, &Bind{MWKey: k2, NewKey: k3}))
	check(t, !w.Bound())
	_, err = readAll(t, e.t, k3, e.pd, 3, base, 1)
	isErr(t, err, ErrMWNotBound)
	noErr(t, b.DeregMR())
	noErr(t, w.DeallocMW())
	isErr(t, w.DeallocMW(), ErrDestroyed)
	_, err = readAll(t, e.t, k3, e.pd, 3, base, 1)
	isErr(t, err, ErrKeyInvalid)
}

func TestMWType2BindInvalidate(t *testing.T) {
	e := newEnv(t)
	buf := pattern(make([]byte, 8192), 4)
	base := uint64(addrOf(buf))
	m := e.reg(t, buf, AccessLocalWrite|AccessMWBind)
	w, err := e.t.AllocMW(e.pd, MWType2)
	noErr(t, err)
	k0 := w.RKey()
	_, err = readAll(t, e.t, k0, e.pd, 7, base, 1)
	isErr(t, err, ErrMWNotBound)
	k1 := IncKey(k0)
	bind := Bind{MWKey: k0, NewKey: k1, MRKey: m.LKey(), Addr: base + 4096, Length: 100, Access: AccessRemoteRead | AccessZeroBased}
	noErr(t, e.t.BindMW(e.pd, 7, &bind))
	// Zero-based: the window's first byte is va 0.
	got, err := readAll(t, e.t, k1, e.pd, 7, 0, 100)
	noErr(t, err)
	eq(t, string(buf[4096:4196]), string(got))
	_, err = readAll(t, e.t, k1, e.pd, 7, 1, 100)
	isErr(t, err, ErrOutOfRange)
	_, err = readAll(t, e.t, k1, e.pd, 8, 0, 1)
	isErr(t, err, ErrMWOtherQP)
	// A bound type 2 window cannot be bound again before invalidation.
	isErr(t, e.t.BindMW(e.pd, 7, &Bind{MWKey: k1, NewKey: IncKey(k1), MRKey: m.LKey(), Addr: base, Length: 1}), ErrMWState)
	// Remote invalidation only through the associated QP, and only within the PD.
	isErr(t, e.t.RemoteInvalidate(e.pd, 8, k1), ErrMWOtherQP)
	other, _ := e.t.AllocPD()
	isErr(t, e.t.RemoteInvalidate(other, 7, k1), ErrPDMismatch)
	isErr(t, e.t.RemoteInvalidate(e.pd, 7, IncKey(k1)), ErrKeyInvalid)
	noErr(t, e.t.RemoteInvalidate(e.pd, 7, k1))
	check(t, !w.Bound())
	_, err = readAll(t, e.t, k1, e.pd, 7, 0, 1)
	isErr(t, err, ErrMWNotBound)
	noErr(t, e.t.LocalInvalidate(e.pd, 7, k1)) // already free: succeeds
	noErr(t, m.DeregMR())                      // no window bound any more

	// Bind again on another QP, then invalidate locally from any QP of the PD.
	m = e.reg(t, buf, AccessLocalWrite|AccessMWBind)
	k2 := IncKey(k1)
	noErr(t, e.t.BindMW(e.pd, 9, &Bind{MWKey: k1, NewKey: k2, MRKey: m.LKey(), Addr: base, Length: 8, Access: AccessRemoteAtomic}))
	_, err = e.t.FetchAdd(k2, e.pd, 9, base, 1)
	noErr(t, err)
	noErr(t, e.t.LocalInvalidate(e.pd, 3, k2))
	_, err = e.t.FetchAdd(k2, e.pd, 9, base, 1)
	isErr(t, err, ErrMWNotBound)
	noErr(t, m.DeregMR())
}

func TestMWBindChecks(t *testing.T) {
	e := newEnv(t)
	other, _ := e.t.AllocPD()
	buf := make([]byte, 4096)
	base := uint64(addrOf(buf))
	good := e.reg(t, buf, AccessLocalWrite|AccessMWBind)
	noBind := e.reg(t, buf, AccessLocalWrite)
	readOnly := e.reg(t, buf, AccessMWBind)
	zero := e.reg(t, buf, AccessLocalWrite|AccessMWBind|AccessZeroBased)
	otherPDMR, err := e.t.RegMR(other, buf, AccessLocalWrite|AccessMWBind)
	noErr(t, err)
	freeMR, _ := e.t.AllocMR(e.pd, 1)
	w1, _ := e.t.AllocMW(e.pd, MWType1)
	w2, _ := e.t.AllocMW(e.pd, MWType2)
	wOther, _ := e.t.AllocMW(other, MWType2)

	tests := []struct {
		name string
		pd   *PD
		w    *MW
		b    Bind
		want error
	}{
		{"no MW_BIND on region", e.pd, w2, Bind{MRKey: noBind.LKey(), Addr: base, Length: 8, Access: AccessRemoteRead}, ErrAccessDenied},
		{"remote write needs local write", e.pd, w2, Bind{MRKey: readOnly.LKey(), Addr: base, Length: 8, Access: AccessRemoteWrite}, ErrAccessDenied},
		{"remote atomic needs local write", e.pd, w2, Bind{MRKey: readOnly.LKey(), Addr: base, Length: 8, Access: AccessRemoteAtomic}, ErrAccessDenied},
		{"zero-based region", e.pd, w2, Bind{MRKey: zero.LKey(), Addr: 0, Length: 8, Access: AccessRemoteRead}, ErrZeroBased},
		{"zero-based type 1", e.pd, w1, Bind{MRKey: good.LKey(), Addr: base, Length: 8, Access: AccessRemoteRead | AccessZeroBased}, ErrZeroBased},
		{"range past region", e.pd, w2, Bind{MRKey: good.LKey(), Addr: base + 4000, Length: 97, Access: AccessRemoteRead}, ErrOutOfRange},
		{"range before region", e.pd, w2, Bind{MRKey: good.LKey(), Addr: base - 1, Length: 8, Access: AccessRemoteRead}, ErrOutOfRange},
		{"type 2 needs a length", e.pd, w2, Bind{MRKey: good.LKey(), Addr: base, Length: 0}, ErrOutOfRange},
		{"local access flag", e.pd, w2, Bind{MRKey: good.LKey(), Addr: base, Length: 8, Access: AccessLocalWrite}, ErrAccessFlags},
		{"window from another PD", e.pd, wOther, Bind{MRKey: good.LKey(), Addr: base, Length: 8}, ErrPDMismatch},
		{"region from another PD", e.pd, w2, Bind{MRKey: otherPDMR.LKey(), Addr: base, Length: 8}, ErrPDMismatch},
		{"free fast-reg region", e.pd, w2, Bind{MRKey: freeMR.LKey(), Addr: 0, Length: 8}, ErrMRInvalidState},
		{"stale region key", e.pd, w2, Bind{MRKey: IncKey(good.LKey()), Addr: base, Length: 8}, ErrKeyInvalid},
		{"region key is a window", e.pd, w2, Bind{MRKey: w1.RKey(), Addr: base, Length: 8}, ErrKeyInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.b
			b.MWKey = tc.w.RKey()
			b.NewKey = IncKey(b.MWKey)
			isErr(t, e.t.BindMW(tc.pd, 1, &b), tc.want)
			eq(t, b.MWKey, tc.w.RKey()) // unchanged on failure
			check(t, !tc.w.Bound())
		})
	}
	isErr(t, e.t.BindMW(e.pd, 1, &Bind{MWKey: IncKey(w2.RKey()), NewKey: w2.RKey(), MRKey: good.LKey(), Addr: base, Length: 8}), ErrKeyInvalid)
	isErr(t, e.t.BindMW(e.pd, 1, &Bind{MWKey: w2.RKey(), NewKey: w1.RKey(), MRKey: good.LKey(), Addr: base, Length: 8}), ErrKeyIndex)
	isErr(t, e.t.BindMW(e.pd, 1, &Bind{MWKey: good.LKey(), NewKey: good.LKey()}), ErrKeyInvalid)
	_, err = e.t.AllocMW(e.pd, 3)
	isErr(t, err, ErrMWType)
	eq(t, "type2", MWType2.String())
}

func TestDeallocMWUnbinds(t *testing.T) {
	e := newEnv(t)
	buf := make([]byte, 64)
	m := e.reg(t, buf, AccessLocalWrite|AccessMWBind)
	w, _ := e.t.AllocMW(e.pd, MWType2)
	noErr(t, e.t.BindMW(e.pd, 1, &Bind{MWKey: w.RKey(), NewKey: IncKey(w.RKey()), MRKey: m.LKey(), Addr: uint64(addrOf(buf)), Length: 64}))
	isErr(t, m.DeregMR(), ErrMWBound)
	isErr(t, e.pd.DeallocPD(), ErrPDInUse)
	noErr(t, w.DeallocMW())
	noErr(t, m.DeregMR())
	noErr(t, e.pd.DeallocPD())
	isErr(t, e.pd.DeallocPD(), ErrDestroyed)
	_, err := e.t.AllocMW(e.pd, MWType1)
	isErr(t, err, ErrDestroyed)
}

func TestMWFlushRange(t *testing.T) {
	e := newEnv(t)
	buf := make([]byte, 4096)
	base := uint64(addrOf(buf))
	m := e.reg(t, buf, AccessLocalWrite|AccessMWBind)
	w, _ := e.t.AllocMW(e.pd, MWType1)
	k := IncKey(w.RKey())
	noErr(t, e.t.BindMW(e.pd, 1, &Bind{MWKey: w.RKey(), NewKey: k, MRKey: m.LKey(), Addr: base + 100, Length: 100, Access: AccessFlushGlobal}))
	noErr(t, e.t.Flush(k, e.pd, 0, AccessFlushGlobal, FlushRange, base+100, 100))
	noErr(t, e.t.Flush(k, e.pd, 0, AccessFlushGlobal, FlushRange, base+200, 0))
	isErr(t, e.t.Flush(k, e.pd, 0, AccessFlushGlobal, FlushRange, base+99, 0), ErrOutOfRange)
	isErr(t, e.t.Flush(k, e.pd, 0, AccessFlushGlobal, FlushRange, base+201, 0), ErrOutOfRange)
	noErr(t, e.t.Flush(k, e.pd, 0, AccessFlushGlobal, FlushMR, 0, 0))
	isErr(t, e.t.Flush(k, e.pd, 0, AccessFlushPersistent, FlushMR, 0, 0), ErrAccessDenied)
	eq(t, int32(0), m.g.holds.Load())
	eq(t, int32(0), w.g.holds.Load())
}
