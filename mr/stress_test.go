package mr

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// TestControlVersusDataPathRace runs lookups and copies while fast registration, invalidation,
// rereg and window binds change the same objects. Under -race it proves that no field is read while
// it changes; the copies themselves check that a successful lookup only ever sees one consistent
// registration (the page contents identify which).
func TestControlVersusDataPathRace(t *testing.T) {
	e := newEnv(t)
	const rounds = 300
	// Two page lists with distinct fill bytes; each fast registration installs one of them.
	lists := [2][][]byte{pages(2, 4096), pages(2, 4096)}
	for i, l := range lists {
		for _, p := range l {
			for j := range p {
				p[j] = byte(0xa0 + i)
			}
		}
	}
	fm, err := e.t.AllocMR(e.pd, 2)
	noErr(t, err)
	var fastKey atomic.Uint32
	fastKey.Store(fm.LKey())

	user := e.reg(t, make([]byte, 8192), AccessLocalWrite|AccessRemoteWrite|AccessMWBind)
	userBase := user.IOVA()
	w, _ := e.t.AllocMW(e.pd, MWType2)
	var mwKey atomic.Uint32
	mwKey.Store(w.RKey())

	var stop atomic.Bool
	var reads atomic.Int32 // successful reads through the churning keys
	var wg sync.WaitGroup
	reader := func(keyOf func() uint32, va uint64, qpn uint32, check func([]byte) bool) {
		defer wg.Done()
		buf := make([]byte, 6000)
		for ; !stop.Load(); runtime.Gosched() { // workers block between packets; spinning here would only starve the control goroutine
			s, err := e.t.LookupRemote(keyOf(), e.pd, qpn, AccessRemoteRead, va, uint64(len(buf)))
			if err != nil {
				if !errors.Is(err, ErrKeyInvalid) && !errors.Is(err, ErrMRInvalidState) && !errors.Is(err, ErrMWNotBound) {
					t.Error(err)
				}
				continue
			}
			s.CopyOut(buf, 0)
			s.Release()
			reads.Add(1)
			if !check(buf) {
				t.Error("inconsistent registration observed")
				return
			}
		}
	}
	uniform := func(b []byte) bool {
		for _, v := range b {
			if v != b[0] {
				return false
			}
		}
		return b[0] == 0xa0 || b[0] == 0xa1
	}
	wg.Add(3)
	go reader(func() uint32 { return fastKey.Load() }, 0, 0, uniform)
	go reader(func() uint32 { return fastKey.Load() }, 100, 0, uniform)
	go reader(func() uint32 { return mwKey.Load() }, 0, 1, func([]byte) bool { return true })
	wg.Add(1)
	go func() { // rkeys of the user region churn through rereg, writers go through LookupLocal
		defer wg.Done()
		src := make([]byte, 8192-6000) // the part of the region outside the window
		for ; !stop.Load(); runtime.Gosched() {
			if s, err := e.t.LookupLocal(user.LKey(), e.pd, AccessLocalWrite, userBase+6000, uint64(len(src))); err == nil {
				s.CopyIn(0, src)
				s.Release()
			}
		}
	}()

	// Churn until the readers have had real successes, so the race detector sees overlap.
	for i := 0; i < rounds || (reads.Load() < 300 && i < 100*rounds); i++ {
		k := IncKey(fastKey.Load())
		if err := e.t.RegFast(e.pd, &FastReg{Key: k, Access: AccessRemoteRead, Length: 8192, PageSize: 4096, Pages: lists[i%2]}); err != nil {
			t.Fatal(err)
		}
		fastKey.Store(k)
		noErr(t, e.t.LocalInvalidate(e.pd, 0, k))

		nk := IncKey(mwKey.Load())
		noErr(t, e.t.BindMW(e.pd, 1, &Bind{MWKey: mwKey.Load(), NewKey: nk, MRKey: user.LKey(), Addr: userBase,
			Length: 6000, Access: AccessRemoteRead | AccessZeroBased}))
		mwKey.Store(nk)
		noErr(t, e.t.RemoteInvalidate(e.pd, 1, nk))
		noErr(t, user.ReregMR(ReregChangeAccess, nil, nil, AccessLocalWrite|AccessRemoteWrite|AccessMWBind))
	}
	stop.Store(true)
	wg.Wait()
	check(t, reads.Load() >= 300, "readers never overlapped the churn: ", reads.Load())
}
