package mr

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkFixture holds one object in every state the access checks distinguish.
type checkFixture struct {
	env
	otherPD         *PD
	buf             []byte
	ro, rw, plain   *MR // remote read only; all remote rights; no remote rights (local write only)
	free            *MR // fast-reg region in the free state
	mw1Unbound      *MW
	mw2Free         *MW
	mw2, mw1        *MW // bound: type 2 to QP 5 with read, type 1 with read|write
	base            uint64
	mw2Key, mw1Key  uint32
	mw2Addr, mw1Len uint64
}

func newCheckFixture(t *testing.T) *checkFixture {
	f := &checkFixture{env: newEnv(t)}
	var err error
	f.otherPD, err = f.t.AllocPD()
	require.NoError(t, err)
	f.buf = pattern(make([]byte, 3*DefaultPageSize), 1)
	f.base = uint64(addrOf(f.buf))
	f.ro = f.reg(t, f.buf, AccessRemoteRead)
	f.rw = f.reg(t, f.buf, allRemote|AccessMWBind)
	f.plain = f.reg(t, f.buf, AccessLocalWrite)
	f.free, err = f.t.AllocMR(f.pd, 4)
	require.NoError(t, err)
	f.mw1Unbound, err = f.t.AllocMW(f.pd, MWType1)
	require.NoError(t, err)
	f.mw2Free, err = f.t.AllocMW(f.pd, MWType2)
	require.NoError(t, err)
	f.mw2, err = f.t.AllocMW(f.pd, MWType2)
	require.NoError(t, err)
	f.mw2Key = IncKey(f.mw2.RKey())
	f.mw2Addr = f.base + 100
	require.NoError(t, f.t.BindMW(f.pd, 5, &Bind{MWKey: f.mw2.RKey(), NewKey: f.mw2Key, MRKey: f.rw.LKey(),
		Addr: f.mw2Addr, Length: 1000, Access: AccessRemoteRead}))
	f.mw1, err = f.t.AllocMW(f.pd, MWType1)
	require.NoError(t, err)
	f.mw1Key = IncKey(f.mw1.RKey())
	f.mw1Len = 4096
	require.NoError(t, f.t.BindMW(f.pd, 9, &Bind{MWKey: f.mw1.RKey(), NewKey: f.mw1Key, MRKey: f.rw.LKey(),
		Addr: f.base, Length: f.mw1Len, Access: AccessRemoteRead | AccessRemoteWrite | AccessRemoteAtomic}))
	return f
}

func TestRemoteAccessChecks(t *testing.T) {
	f := newCheckFixture(t)
	b := f.base
	tests := []struct {
		name   string
		key    uint32
		pd     *PD
		qpn    uint32
		need   Access
		va, n  uint64
		want   error
		offset uint64 // expected region offset when want is nil
	}{
		{"ok read", f.ro.RKey(), f.pd, 1, AccessRemoteRead, b + 10, 100, nil, 10},
		{"ok whole", f.rw.RKey(), f.pd, 1, AccessRemoteWrite, b, uint64(len(f.buf)), nil, 0},
		{"no such index", MakeKey(MinMRIndex+1000, 1), f.pd, 1, AccessRemoteRead, b, 1, ErrKeyInvalid, 0},
		{"index 0", MakeKey(0, KeyVariant(f.ro.RKey())), f.pd, 1, AccessRemoteRead, b, 1, ErrKeyInvalid, 0},
		{"beyond MW range", MakeKey(MaxMWIndex+1, 0), f.pd, 1, AccessRemoteRead, b, 1, ErrKeyInvalid, 0},
		{"stale variant", IncKey(f.ro.RKey()), f.pd, 1, AccessRemoteRead, b, 1, ErrKeyInvalid, 0},
		{"pd mismatch", f.ro.RKey(), f.otherPD, 1, AccessRemoteRead, b, 1, ErrPDMismatch, 0},
		{"nil pd", f.ro.RKey(), nil, 1, AccessRemoteRead, b, 1, ErrPDMismatch, 0},
		{"write on read-only", f.ro.RKey(), f.pd, 1, AccessRemoteWrite, b, 1, ErrAccessDenied, 0},
		{"atomic on read-only", f.ro.RKey(), f.pd, 1, AccessRemoteAtomic, b, 8, ErrAccessDenied, 0},
		{"read without remote rights", f.plain.RKey(), f.pd, 1, AccessRemoteRead, b, 1, ErrAccessDenied, 0},
		{"flush without right", f.ro.RKey(), f.pd, 1, AccessFlushGlobal, b, 1, ErrAccessDenied, 0},
		{"before start", f.ro.RKey(), f.pd, 1, AccessRemoteRead, b - 1, 2, ErrOutOfRange, 0},
		{"past end", f.ro.RKey(), f.pd, 1, AccessRemoteRead, b + uint64(len(f.buf)) - 1, 2, ErrOutOfRange, 0},
		{"length overflow", f.ro.RKey(), f.pd, 1, AccessRemoteRead, b + 1, ^uint64(0), ErrOutOfRange, 0},
		{"free fast-reg", f.free.RKey(), f.pd, 1, AccessRemoteRead, 0, 1, ErrMRInvalidState, 0},
		{"free fast-reg stale key", IncKey(f.free.RKey()), f.pd, 1, AccessRemoteRead, 0, 1, ErrKeyInvalid, 0},
		{"zero-length read skips key", 0xdeadbeef, nil, 1, AccessRemoteRead, 1, 0, nil, 0},
		{"zero-length write skips key", 0, nil, 1, AccessRemoteWrite, 0, 0, nil, 0},
		{"zero-length flush is checked", 0xdeadbeef, f.pd, 1, AccessFlushGlobal, 0, 0, ErrKeyInvalid, 0},
		{"zero-length with no access is checked", 0xdeadbeef, f.pd, 1, 0, 0, 0, ErrKeyInvalid, 0},
		// Windows.
		{"mw2 ok", f.mw2Key, f.pd, 5, AccessRemoteRead, f.mw2Addr + 10, 990, nil, 110},
		{"mw2 old key", f.mw2.key - 1, f.pd, 5, AccessRemoteRead, f.mw2Addr, 1, ErrKeyInvalid, 0},
		{"mw2 other qp", f.mw2Key, f.pd, 6, AccessRemoteRead, f.mw2Addr, 1, ErrMWOtherQP, 0},
		{"mw2 pd", f.mw2Key, f.otherPD, 5, AccessRemoteRead, f.mw2Addr, 1, ErrPDMismatch, 0},
		{"mw2 access beyond window", f.mw2Key, f.pd, 5, AccessRemoteWrite, f.mw2Addr, 1, ErrAccessDenied, 0},
		{"mw2 before window", f.mw2Key, f.pd, 5, AccessRemoteRead, f.mw2Addr - 1, 1, ErrOutOfRange, 0},
		{"mw2 past window", f.mw2Key, f.pd, 5, AccessRemoteRead, f.mw2Addr + 1, 1000, ErrOutOfRange, 0},
		{"mw2 free", f.mw2Free.RKey(), f.pd, 5, AccessRemoteRead, b, 1, ErrMWNotBound, 0},
		{"mw1 unbound", f.mw1Unbound.RKey(), f.pd, 5, AccessRemoteRead, b, 1, ErrMWNotBound, 0},
		{"mw1 any qp", f.mw1Key, f.pd, 77, AccessRemoteWrite, b + 8, 8, nil, 8},
		{"mw1 past window", f.mw1Key, f.pd, 77, AccessRemoteRead, b + f.mw1Len, 1, ErrOutOfRange, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := f.t.LookupRemote(tc.key, tc.pd, tc.qpn, tc.need, tc.va, tc.n)
			defer s.Release()
			if tc.want != nil {
				require.ErrorIs(t, err, tc.want)
				require.Equal(t, uint64(0), s.Len())
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.n, s.Len())
			if tc.n > 0 {
				require.Equal(t, tc.offset, s.off)
				got := make([]byte, 1)
				s.CopyOut(got, 0)
				require.Equal(t, f.buf[tc.offset], got[0])
			}
		})
	}
	// A failed lookup leaves no hold behind.
	for _, m := range []*MR{f.ro, f.rw, f.plain, f.free} {
		require.Equal(t, int32(0), m.g.holds.Load())
	}
}

func TestLocalAccessChecks(t *testing.T) {
	f := newCheckFixture(t)
	_, err := f.t.LookupLocal(f.mw1Key, f.pd, 0, f.base, 1)
	require.ErrorIs(t, err, ErrKeyInvalid) // windows have no lkey
	_, err = f.t.LookupLocal(f.ro.LKey(), f.pd, AccessLocalWrite, f.base, 1)
	require.ErrorIs(t, err, ErrAccessDenied)
	_, err = f.t.LookupLocal(f.ro.LKey(), f.otherPD, 0, f.base, 1)
	require.ErrorIs(t, err, ErrPDMismatch)
	_, err = f.t.LookupLocal(f.plain.LKey(), f.pd, AccessLocalWrite, f.base+uint64(len(f.buf)), 1)
	require.ErrorIs(t, err, ErrOutOfRange)
	_, err = f.t.LookupLocal(f.free.LKey(), f.pd, 0, 0, 1)
	require.ErrorIs(t, err, ErrMRInvalidState)
	s, err := f.t.LookupLocal(f.plain.LKey(), f.pd, AccessLocalWrite, f.base+5, 3)
	require.NoError(t, err)
	require.Equal(t, 3, s.CopyIn(0, []byte{0xa, 0xb, 0xc, 0xd}))
	s.Release()
	s.Release() // idempotent on the same variable
	require.Equal(t, byte(0xc), f.buf[7])
	require.Equal(t, byte(pattern(make([]byte, 9), 1)[8]), f.buf[8])
	require.Equal(t, int32(0), f.plain.g.holds.Load())
}

// TestDeregWaitsForAccesses checks the guarantee DeregMR gives: once it returns, no access through
// the region is running and none can start.
func TestDeregWaitsForAccesses(t *testing.T) {
	for range 20 {
		e := newEnv(t)
		buf := make([]byte, 4096)
		m := e.reg(t, buf, AccessLocalWrite|AccessRemoteWrite)
		key, va := m.RKey(), uint64(addrOf(buf))
		var done atomic.Bool
		var wg sync.WaitGroup
		var violations atomic.Int32
		for range 4 {
			wg.Go(func() {
				src := make([]byte, 512)
				for {
					s, err := e.t.LookupRemote(key, e.pd, 0, AccessRemoteWrite, va, 512)
					if err != nil {
						assert.ErrorIs(t, err, ErrKeyInvalid)
						return
					}
					s.CopyIn(0, src)
					if done.Load() {
						violations.Add(1)
					}
					s.Release()
				}
			})
		}
		require.NoError(t, m.DeregMR())
		done.Store(true)
		wg.Wait()
		require.Equal(t, int32(0), violations.Load())
		require.ErrorIs(t, m.DeregMR(), ErrDestroyed)
	}
}
