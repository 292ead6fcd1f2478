package mr

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMWType1BindRebindUnbind(t *testing.T) {
	e := newEnv(t)
	buf := pattern(make([]byte, 8192), 3)
	base := uint64(addrOf(buf))
	a := e.reg(t, buf, AccessLocalWrite|AccessMWBind)
	b := e.reg(t, buf, AccessLocalWrite|AccessMWBind)
	w, err := e.t.AllocMW(e.pd, MWType1)
	require.NoError(t, err)
	require.Equal(t, MWType1, w.Type())
	k0 := w.RKey()
	k1 := IncKey(k0)
	require.NoError(t, e.t.BindMW(e.pd, 1, &Bind{MWKey: k0, NewKey: k1, MRKey: a.LKey(), Addr: base + 10, Length: 20, Access: AccessRemoteRead}))
	require.Equal(t, k1, w.RKey())
	require.True(t, w.Bound())
	got, err := readAll(t, e.t, k1, e.pd, 3, base+10, 20)
	require.NoError(t, err)
	require.Equal(t, string(buf[10:30]), string(got))
	_, err = readAll(t, e.t, k0, e.pd, 3, base+10, 1)
	require.ErrorIs(t, err, ErrKeyInvalid)

	// Dereg of a region with a bound window fails with a typed error.
	err = a.DeregMR()
	require.ErrorIs(t, err, ErrMWBound)
	var me *Error
	require.True(t, errors.As(err, &me), "want *Error")
	require.Equal(t, "dereg_mr", me.Op)
	require.Equal(t, a.LKey(), me.Key)
	require.ErrorIs(t, a.ReregMR(ReregChangeAccess, nil, nil, AccessMWBind), ErrMWBound)

	// Rebinding to another region moves the binding.
	k2 := IncKey(k1)
	require.NoError(t, e.t.BindMW(e.pd, 1, &Bind{MWKey: k1, NewKey: k2, MRKey: b.LKey(), Addr: base, Length: 8192, Access: AccessRemoteWrite}))
	require.NoError(t, a.DeregMR())
	require.ErrorIs(t, b.DeregMR(), ErrMWBound)
	// Type 1 windows are not invalidated; they are unbound with a zero-length bind.
	require.ErrorIs(t, e.t.LocalInvalidate(e.pd, 1, k2), ErrMWType)
	require.ErrorIs(t, e.t.RemoteInvalidate(e.pd, 1, k2), ErrMWType)
	k3 := IncKey(k2)
	require.NoError(t, e.t.BindMW(e.pd, 1, &Bind{MWKey: k2, NewKey: k3}))
	require.True(t, !w.Bound())
	_, err = readAll(t, e.t, k3, e.pd, 3, base, 1)
	require.ErrorIs(t, err, ErrMWNotBound)
	require.NoError(t, b.DeregMR())
	require.NoError(t, w.DeallocMW())
	require.ErrorIs(t, w.DeallocMW(), ErrDestroyed)
	_, err = readAll(t, e.t, k3, e.pd, 3, base, 1)
	require.ErrorIs(t, err, ErrKeyInvalid)
}

func TestMWType2BindInvalidate(t *testing.T) {
	e := newEnv(t)
	buf := pattern(make([]byte, 8192), 4)
	base := uint64(addrOf(buf))
	m := e.reg(t, buf, AccessLocalWrite|AccessMWBind)
	w, err := e.t.AllocMW(e.pd, MWType2)
	require.NoError(t, err)
	k0 := w.RKey()
	_, err = readAll(t, e.t, k0, e.pd, 7, base, 1)
	require.ErrorIs(t, err, ErrMWNotBound)
	k1 := IncKey(k0)
	bind := Bind{MWKey: k0, NewKey: k1, MRKey: m.LKey(), Addr: base + 4096, Length: 100, Access: AccessRemoteRead | AccessZeroBased}
	require.NoError(t, e.t.BindMW(e.pd, 7, &bind))
	// Zero-based: the window's first byte is va 0.
	got, err := readAll(t, e.t, k1, e.pd, 7, 0, 100)
	require.NoError(t, err)
	require.Equal(t, string(buf[4096:4196]), string(got))
	_, err = readAll(t, e.t, k1, e.pd, 7, 1, 100)
	require.ErrorIs(t, err, ErrOutOfRange)
	_, err = readAll(t, e.t, k1, e.pd, 8, 0, 1)
	require.ErrorIs(t, err, ErrMWOtherQP)
	// A bound type 2 window cannot be bound again before invalidation.
	require.ErrorIs(t, e.t.BindMW(e.pd, 7, &Bind{MWKey: k1, NewKey: IncKey(k1), MRKey: m.LKey(), Addr: base, Length: 1}), ErrMWState)
	// Remote invalidation only through the associated QP, and only within the PD.
	require.ErrorIs(t, e.t.RemoteInvalidate(e.pd, 8, k1), ErrMWOtherQP)
	other, _ := e.t.AllocPD()
	require.ErrorIs(t, e.t.RemoteInvalidate(other, 7, k1), ErrPDMismatch)
	require.ErrorIs(t, e.t.RemoteInvalidate(e.pd, 7, IncKey(k1)), ErrKeyInvalid)
	require.NoError(t, e.t.RemoteInvalidate(e.pd, 7, k1))
	require.True(t, !w.Bound())
	_, err = readAll(t, e.t, k1, e.pd, 7, 0, 1)
	require.ErrorIs(t, err, ErrMWNotBound)
	require.NoError(t, e.t.LocalInvalidate(e.pd, 7, k1)) // already free: succeeds
	require.NoError(t, m.DeregMR())                      // no window bound any more

	// Bind again on another QP, then invalidate locally from any QP of the PD.
	m = e.reg(t, buf, AccessLocalWrite|AccessMWBind)
	k2 := IncKey(k1)
	require.NoError(t, e.t.BindMW(e.pd, 9, &Bind{MWKey: k1, NewKey: k2, MRKey: m.LKey(), Addr: base, Length: 8, Access: AccessRemoteAtomic}))
	_, err = e.t.FetchAdd(k2, e.pd, 9, base, 1)
	require.NoError(t, err)
	require.NoError(t, e.t.LocalInvalidate(e.pd, 3, k2))
	_, err = e.t.FetchAdd(k2, e.pd, 9, base, 1)
	require.ErrorIs(t, err, ErrMWNotBound)
	require.NoError(t, m.DeregMR())
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
	require.NoError(t, err)
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
		{"MW_BIND on a window", e.pd, w2, Bind{MRKey: good.LKey(), Addr: base, Length: 8, Access: AccessMWBind}, ErrAccessFlags},
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
			require.ErrorIs(t, e.t.BindMW(tc.pd, 1, &b), tc.want)
			require.Equal(t, b.MWKey, tc.w.RKey()) // unchanged on failure
			require.True(t, !tc.w.Bound())
		})
	}
	require.ErrorIs(t, e.t.BindMW(e.pd, 1, &Bind{MWKey: IncKey(w2.RKey()), NewKey: w2.RKey(), MRKey: good.LKey(), Addr: base, Length: 8}), ErrKeyInvalid)
	require.ErrorIs(t, e.t.BindMW(e.pd, 1, &Bind{MWKey: w2.RKey(), NewKey: w1.RKey(), MRKey: good.LKey(), Addr: base, Length: 8}), ErrKeyIndex)
	require.ErrorIs(t, e.t.BindMW(e.pd, 1, &Bind{MWKey: good.LKey(), NewKey: good.LKey()}), ErrKeyInvalid)
	_, err = e.t.AllocMW(e.pd, 3)
	require.ErrorIs(t, err, ErrMWType)
	require.Equal(t, "type2", MWType2.String())
}

func TestDeallocMWUnbinds(t *testing.T) {
	e := newEnv(t)
	buf := make([]byte, 64)
	m := e.reg(t, buf, AccessLocalWrite|AccessMWBind)
	w, _ := e.t.AllocMW(e.pd, MWType2)
	require.NoError(t, e.t.BindMW(e.pd, 1, &Bind{MWKey: w.RKey(), NewKey: IncKey(w.RKey()), MRKey: m.LKey(), Addr: uint64(addrOf(buf)), Length: 64}))
	require.ErrorIs(t, m.DeregMR(), ErrMWBound)
	require.ErrorIs(t, e.pd.DeallocPD(), ErrPDInUse)
	require.NoError(t, w.DeallocMW())
	require.NoError(t, m.DeregMR())
	require.NoError(t, e.pd.DeallocPD())
	require.ErrorIs(t, e.pd.DeallocPD(), ErrDestroyed)
	_, err := e.t.AllocMW(e.pd, MWType1)
	require.ErrorIs(t, err, ErrDestroyed)
}

func TestMWFlushRange(t *testing.T) {
	e := newEnv(t)
	buf := make([]byte, 4096)
	base := uint64(addrOf(buf))
	m := e.reg(t, buf, AccessLocalWrite|AccessMWBind)
	w, _ := e.t.AllocMW(e.pd, MWType1)
	k := IncKey(w.RKey())
	require.NoError(t, e.t.BindMW(e.pd, 1, &Bind{MWKey: w.RKey(), NewKey: k, MRKey: m.LKey(), Addr: base + 100, Length: 100, Access: AccessFlushGlobal}))
	require.NoError(t, e.t.Flush(k, e.pd, 0, AccessFlushGlobal, FlushRange, base+100, 100))
	require.NoError(t, e.t.Flush(k, e.pd, 0, AccessFlushGlobal, FlushRange, base+200, 0))
	require.ErrorIs(t, e.t.Flush(k, e.pd, 0, AccessFlushGlobal, FlushRange, base+99, 0), ErrOutOfRange)
	require.ErrorIs(t, e.t.Flush(k, e.pd, 0, AccessFlushGlobal, FlushRange, base+201, 0), ErrOutOfRange)
	require.NoError(t, e.t.Flush(k, e.pd, 0, AccessFlushGlobal, FlushMR, 0, 0))
	require.ErrorIs(t, e.t.Flush(k, e.pd, 0, AccessFlushPersistent, FlushMR, 0, 0), ErrAccessDenied)
	require.Equal(t, int32(0), m.g.holds.Load())
	require.Equal(t, int32(0), w.g.holds.Load())
}

// TestMWBindLocalWrite binds windows carrying LOCAL_WRITE, as rdma-core's tests do and rxe and
// mlx5 accept: the bind succeeds, and the flag grants nothing through the window.
func TestMWBindLocalWrite(t *testing.T) {
	e := newEnv(t)
	buf := pattern(make([]byte, 4096), 5)
	base := uint64(addrOf(buf))
	m := e.reg(t, buf, AccessLocalWrite|AccessMWBind)
	w, err := e.t.AllocMW(e.pd, MWType1)
	require.NoError(t, err)
	k := IncKey(w.RKey())
	require.NoError(t, e.t.BindMW(e.pd, 1, &Bind{MWKey: w.RKey(), NewKey: k, MRKey: m.LKey(), Addr: base, Length: 64, Access: AccessLocalWrite}))
	_, err = readAll(t, e.t, k, e.pd, 3, base, 8)
	require.ErrorIs(t, err, ErrAccessDenied)

	k2 := IncKey(k)
	require.NoError(t, e.t.BindMW(e.pd, 1, &Bind{MWKey: k, NewKey: k2, MRKey: m.LKey(), Addr: base, Length: 64, Access: AccessLocalWrite | AccessRemoteRead}))
	got, err := readAll(t, e.t, k2, e.pd, 3, base, 8)
	require.NoError(t, err)
	require.Equal(t, buf[:8], got)
}
