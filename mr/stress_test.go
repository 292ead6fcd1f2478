package mr

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestControlVersusDataPathRace runs lookups and copies while fast registration, invalidation,
// rereg and window binds change the same objects. Under -race it proves that no field is read while
// it changes; the copies themselves check that a successful lookup only ever sees one consistent
// registration (the page contents identify which).
//
// The overlap does not depend on how much the scheduler lets the readers run: every round the
// control goroutine installs fresh keys, publishes a new generation and then waits until each data
// path goroutine has finished one access that began after the publication (with the keys valid,
// so readers must succeed). Only then does it invalidate and rereg, while the readers keep going
// unsynchronised. A loaded machine makes the test slower, never weaker.
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
	require.NoError(t, err)
	var fastKey atomic.Uint32
	fastKey.Store(fm.LKey())

	user := e.reg(t, make([]byte, 8192), AccessLocalWrite|AccessRemoteWrite|AccessMWBind)
	userBase := user.IOVA()
	w, _ := e.t.AllocMW(e.pd, MWType2)
	var mwKey atomic.Uint32
	mwKey.Store(w.RKey())

	var (
		stop  atomic.Bool
		gen   atomic.Uint64 // round whose keys are installed and valid; 0 before the first
		reads atomic.Int32  // successful remote reads through the churning keys
		wg    sync.WaitGroup
	)
	// done receives one report per data path goroutine per generation: the first access that
	// started after the generation was published. Unbuffered, so a goroutine cannot run ahead.
	done := make(chan error)
	// access runs op until stopped and reports each new generation once. op's error is only a
	// failure when the access began in a published generation (keys valid until every report).
	access := func(op func() error) {
		defer wg.Done()
		var reported uint64
		for ; !stop.Load(); runtime.Gosched() { // workers block between packets; spinning here would only starve the control goroutine
			g := gen.Load()
			err := op()
			if g > reported {
				reported = g
				done <- err
			}
		}
	}
	remoteRead := func(keyOf func() uint32, va uint64, qpn uint32, consistent func([]byte) bool) func() error {
		buf := make([]byte, 6000)
		return func() error {
			s, err := e.t.LookupRemote(keyOf(), e.pd, qpn, AccessRemoteRead, va, uint64(len(buf)))
			if err != nil {
				assert.True(t, errors.Is(err, ErrKeyInvalid) || errors.Is(err, ErrMRInvalidState) || errors.Is(err, ErrMWNotBound),
					"unexpected lookup error: %v", err)
				return err
			}
			s.CopyOut(buf, 0)
			s.Release()
			reads.Add(1)
			assert.True(t, consistent(buf), "inconsistent registration observed")
			return nil
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
	src := make([]byte, 8192-6000) // the part of the user region outside the window
	localWrite := func() error {   // rkeys of the user region churn through rereg; writers use the lkey
		s, err := e.t.LookupLocal(user.LKey(), e.pd, AccessLocalWrite, userBase+6000, uint64(len(src)))
		if err != nil {
			return err
		}
		s.CopyIn(0, src)
		s.Release()
		return nil
	}
	ops := []func() error{
		remoteRead(func() uint32 { return fastKey.Load() }, 0, 0, uniform),
		remoteRead(func() uint32 { return fastKey.Load() }, 100, 0, uniform),
		remoteRead(func() uint32 { return mwKey.Load() }, 0, 1, func([]byte) bool { return true }),
		localWrite,
	}
	wg.Add(len(ops))
	for _, op := range ops {
		go access(op)
	}

	for i := range rounds {
		k := IncKey(fastKey.Load())
		require.NoError(t, e.t.RegFast(e.pd, &FastReg{Key: k, Access: AccessRemoteRead, Length: 8192, PageSize: 4096, Pages: lists[i%2]}))
		fastKey.Store(k)
		nk := IncKey(mwKey.Load())
		require.NoError(t, e.t.BindMW(e.pd, 1, &Bind{MWKey: mwKey.Load(), NewKey: nk, MRKey: user.LKey(), Addr: userBase,
			Length: 6000, Access: AccessRemoteRead | AccessZeroBased}))
		mwKey.Store(nk)
		gen.Store(uint64(i + 1))
		for range ops {
			require.NoError(t, <-done, "an access with valid keys failed in round %d", i)
		}

		// The readers keep running through these, unsynchronised with them.
		require.NoError(t, e.t.LocalInvalidate(e.pd, 0, k))
		require.NoError(t, e.t.RemoteInvalidate(e.pd, 1, nk))
		require.NoError(t, user.ReregMR(ReregChangeAccess, nil, nil, AccessLocalWrite|AccessRemoteWrite|AccessMWBind))
	}
	stop.Store(true)
	wg.Wait()
	require.GreaterOrEqual(t, reads.Load(), int32(3*rounds), "each reader succeeds at least once per round")
}
