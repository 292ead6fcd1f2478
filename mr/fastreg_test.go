package mr

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func pages(n, size int) [][]byte {
	p := make([][]byte, n)
	for i := range p {
		p[i] = pattern(make([]byte, size), byte(i))
	}
	return p
}

func TestFastRegFlow(t *testing.T) {
	e := newEnv(t)
	m, err := e.t.AllocMR(e.pd, 4)
	require.NoError(t, err)
	require.True(t, m.IsFastReg() && !m.Valid())
	require.Equal(t, 4, m.MaxPages())
	k0 := m.LKey()
	_, err = readAll(t, e.t, k0, e.pd, 1, 0, 1)
	require.ErrorIs(t, err, ErrMRInvalidState)

	// Non-contiguous pages, iova with an offset into the first page.
	pl := pages(3, 4096)
	k1 := IncKey(k0)
	r := FastReg{Key: k1, Access: AccessLocalWrite | AccessRemoteRead | AccessRemoteWrite, IOVA: 0x10000,
		Length: 2*4096 + 50 - 100, PageSize: 4096, Offset: 100, Pages: pl}
	require.NoError(t, e.t.RegFast(e.pd, &r))
	require.True(t, m.Valid())
	require.Equal(t, k1, m.LKey())
	require.Equal(t, uint64(0x10000), m.IOVA())
	require.Equal(t, r.Length, m.Length())
	got, err := readAll(t, e.t, k1, e.pd, 1, 0x10000+4096-100-2, 4)
	require.NoError(t, err)
	require.Equal(t, string(append(pl[0][4094:], pl[1][:2]...)), string(got))
	_, err = readAll(t, e.t, k1, e.pd, 1, 0x10000+r.Length-1, 2)
	require.ErrorIs(t, err, ErrOutOfRange)
	_, err = readAll(t, e.t, k0, e.pd, 1, 0x10000, 1)
	require.ErrorIs(t, err, ErrKeyInvalid)
	// The page list was copied: changing the caller's slice does not change the region.
	pl[1] = make([]byte, 4096)
	got, _ = readAll(t, e.t, k1, e.pd, 1, 0x10000+4096-100, 1)
	require.Equal(t, pattern(make([]byte, 1), 1)[0], got[0])

	// REG_MR on a valid region is refused; LOCAL_INV frees it; then it can be registered again.
	r2 := r
	r2.Key = IncKey(k1)
	require.ErrorIs(t, e.t.RegFast(e.pd, &r2), ErrMRNotFree)
	require.ErrorIs(t, e.t.LocalInvalidate(e.pd, 1, IncKey(k1)), ErrKeyInvalid)
	require.NoError(t, e.t.LocalInvalidate(e.pd, 1, k1))
	require.True(t, !m.Valid())
	_, err = readAll(t, e.t, k1, e.pd, 1, 0x10000, 1)
	require.ErrorIs(t, err, ErrMRInvalidState)
	require.NoError(t, e.t.LocalInvalidate(e.pd, 1, k1)) // already free
	r2.Pages = pages(4, 8192)
	r2.PageSize, r2.Offset, r2.Length, r2.IOVA = 8192, 0, 4*8192, 0
	require.NoError(t, e.t.RegFast(e.pd, &r2))
	got, err = readAll(t, e.t, r2.Key, e.pd, 1, 3*8192, 8192)
	require.NoError(t, err)
	require.Equal(t, string(r2.Pages[3]), string(got))
	// SEND_WITH_INV invalidates a fast-reg region too.
	require.NoError(t, e.t.RemoteInvalidate(e.pd, 1, r2.Key))
	require.True(t, !m.Valid())
	require.NoError(t, m.DeregMR())
	require.ErrorIs(t, e.t.RegFast(e.pd, &r2), ErrKeyInvalid)
}

func TestFastRegChecks(t *testing.T) {
	e := newEnv(t)
	other, _ := e.t.AllocPD()
	m, err := e.t.AllocMR(e.pd, 2)
	require.NoError(t, err)
	user := e.reg(t, make([]byte, 64), 0)
	ok := FastReg{Key: IncKey(m.LKey()), Access: AccessRemoteRead, Length: 4096, PageSize: 4096, Pages: pages(1, 4096)}
	tests := []struct {
		name string
		pd   *PD
		mod  func(*FastReg)
		want error
	}{
		{"other pd", other, func(*FastReg) {}, ErrPDMismatch},
		{"user region", e.pd, func(r *FastReg) { r.Key = IncKey(user.LKey()) }, ErrWrongMRType},
		{"window key", e.pd, func(r *FastReg) { r.Key = MakeKey(MinMWIndex, 1) }, ErrKeyInvalid},
		{"unknown index", e.pd, func(r *FastReg) { r.Key = MakeKey(MinMRIndex+99, 1) }, ErrKeyInvalid},
		{"too many pages", e.pd, func(r *FastReg) { r.Pages, r.Length = pages(3, 4096), 3*4096 }, ErrPageList},
		{"short page", e.pd, func(r *FastReg) { r.Pages = [][]byte{make([]byte, 4095)}; r.Length = 10 }, ErrPageList},
		{"length beyond pages", e.pd, func(r *FastReg) { r.Length = 4097 }, ErrPageList},
		{"offset beyond page", e.pd, func(r *FastReg) { r.Offset = 4096; r.Length = 1 }, ErrPageList},
		{"zero length", e.pd, func(r *FastReg) { r.Length = 0 }, ErrPageList},
		{"page size", e.pd, func(r *FastReg) { r.PageSize = 3000 }, ErrPageSize},
		{"remote write without local write", e.pd, func(r *FastReg) { r.Access = AccessRemoteWrite }, ErrAccessFlags},
		{"iova wraps", e.pd, func(r *FastReg) { r.IOVA = ^uint64(0) - 100 }, ErrOutOfRange},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := ok
			tc.mod(&r)
			require.ErrorIs(t, e.t.RegFast(tc.pd, &r), tc.want)
			require.True(t, !m.Valid())
		})
	}
	require.ErrorIs(t, e.t.LocalInvalidate(e.pd, 1, user.LKey()), ErrWrongMRType)
	require.ErrorIs(t, e.t.LocalInvalidate(other, 1, m.LKey()), ErrPDMismatch)
	_, err = e.t.AllocMR(e.pd, MaxFastRegPageListLen+1)
	require.ErrorIs(t, err, ErrPageList)
	_, err = e.t.AllocMR(e.pd, 0)
	require.ErrorIs(t, err, ErrPageList)
	big, err := e.t.AllocMR(e.pd, MaxFastRegPageListLen)
	require.NoError(t, err)
	r := FastReg{Key: IncKey(big.LKey()), Access: AccessRemoteRead, Length: MaxFastRegPageListLen * 4096,
		PageSize: 4096, Pages: pages(MaxFastRegPageListLen, 4096)}
	require.NoError(t, e.t.RegFast(e.pd, &r))
	// A region with a bound window cannot be invalidated.
	m2, _ := e.t.AllocMR(e.pd, 1)
	r = FastReg{Key: IncKey(m2.LKey()), Access: AccessLocalWrite | AccessMWBind, Length: 4096, PageSize: 4096, Pages: pages(1, 4096)}
	require.NoError(t, e.t.RegFast(e.pd, &r))
	w, _ := e.t.AllocMW(e.pd, MWType2)
	require.NoError(t, e.t.BindMW(e.pd, 1, &Bind{MWKey: w.RKey(), NewKey: IncKey(w.RKey()), MRKey: r.Key, Addr: 0, Length: 10}))
	require.ErrorIs(t, e.t.LocalInvalidate(e.pd, 1, r.Key), ErrMWBound)
	require.ErrorIs(t, m2.ReregMR(ReregChangeAccess, nil, nil, 0), ErrWrongMRType)
}

func TestReregMR(t *testing.T) {
	e := newEnv(t)
	pd2, _ := e.t.AllocPD()
	a := pattern(make([]byte, 5000), 1)
	b := pattern(make([]byte, 7000), 2)
	m := e.reg(t, a, AccessRemoteRead)
	k0 := m.LKey()

	// Access change: the key stays and reaches the region with its new rights.
	require.NoError(t, m.ReregMR(ReregChangeAccess, nil, nil, AccessLocalWrite|AccessRemoteWrite))
	k1 := m.LKey()
	require.Equal(t, k0, k1)
	_, err := e.t.LookupRemote(k1, e.pd, 0, AccessRemoteRead, uint64(addrOf(a)), 1)
	require.ErrorIs(t, err, ErrAccessDenied)
	s, err := e.t.LookupRemote(k1, e.pd, 0, AccessRemoteWrite, uint64(addrOf(a)), 1)
	require.NoError(t, err)
	s.Release()

	// PD change: the old PD is released, the new one held.
	require.NoError(t, m.ReregMR(ReregChangePD, pd2, nil, 0))
	k2 := m.LKey()
	require.Equal(t, k1, k2)
	require.Equal(t, pd2, m.PD())
	_, err = e.t.LookupRemote(k2, e.pd, 0, AccessRemoteWrite, uint64(addrOf(a)), 1)
	require.ErrorIs(t, err, ErrPDMismatch)
	require.NoError(t, e.pd.DeallocPD())
	require.ErrorIs(t, pd2.DeallocPD(), ErrPDInUse)

	// Translation change: new buffer, iova follows its address.
	require.NoError(t, m.ReregMR(ReregChangeTranslation|ReregChangeAccess, nil, b, AccessRemoteRead))
	k3 := m.LKey()
	require.Equal(t, uint64(addrOf(b)), m.IOVA())
	require.Equal(t, uint64(7000), m.Length())
	got, err := readAll(t, e.t, k3, pd2, 0, m.IOVA()+6000, 1000)
	require.NoError(t, err)
	require.Equal(t, string(b[6000:]), string(got))

	// Zero-based on and off.
	require.NoError(t, m.ReregMR(ReregChangeAccess, nil, nil, AccessRemoteRead|AccessZeroBased))
	require.Equal(t, uint64(0), m.IOVA())
	require.NoError(t, m.ReregMR(ReregChangeAccess, nil, nil, AccessRemoteRead))
	require.Equal(t, uint64(addrOf(b)), m.IOVA())

	// Failures leave the region unchanged.
	k4 := m.LKey()
	require.ErrorIs(t, m.ReregMR(0, nil, nil, 0), ErrReregFlags)
	require.ErrorIs(t, m.ReregMR(8, nil, nil, 0), ErrReregFlags)
	require.ErrorIs(t, m.ReregMR(ReregChangeAccess, nil, nil, AccessRemoteAtomic), ErrAccessFlags)
	require.ErrorIs(t, m.ReregMR(ReregChangePD, nil, nil, 0), ErrInvalidPD)
	require.ErrorIs(t, m.ReregMR(ReregChangePD, e.pd, nil, 0), ErrDestroyed)
	require.ErrorIs(t, m.ReregMR(ReregChangeTranslation, nil, nil, 0), ErrEmpty)
	require.Equal(t, k4, m.LKey())
	require.Equal(t, AccessRemoteRead, m.Access())
	require.NoError(t, m.DeregMR())
	require.ErrorIs(t, m.ReregMR(ReregChangeAccess, nil, nil, 0), ErrDestroyed)
	require.NoError(t, pd2.DeallocPD())
}
