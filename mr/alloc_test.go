package mr

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDataPathDoesNotAllocate(t *testing.T) {
	e := newEnv(t)
	buf := make([]byte, 64<<10)
	m := e.reg(t, buf, allRemote|AccessMWBind)
	key, base := m.RKey(), m.IOVA()
	w, _ := e.t.AllocMW(e.pd, MWType2)
	wk := IncKey(w.RKey())
	require.NoError(t, e.t.BindMW(e.pd, 3, &Bind{MWKey: w.RKey(), NewKey: wk, MRKey: key, Addr: base, Length: 8192, Access: AccessRemoteRead}))
	fm, _ := e.t.AllocMR(e.pd, 4)
	pl := pages(4, 4096)
	fk := fm.LKey()
	sges := []SGE{{Addr: base, Length: 3000, LKey: key}, {Addr: base + 5000, Length: 6000, LKey: key}}
	pkt := make([]byte, 4096)
	bad := IncKey(key)
	var c Cursor

	cases := map[string]func(){
		"LookupRemote+CopyIn": func() {
			s, _ := e.t.LookupRemote(key, e.pd, 0, AccessRemoteWrite, base+100, 4096)
			s.CopyIn(0, pkt)
			s.Release()
		},
		"LookupRemote via MW+CopyOut": func() {
			s, _ := e.t.LookupRemote(wk, e.pd, 3, AccessRemoteRead, base+100, 4096)
			s.CopyOut(pkt, 0)
			s.Release()
		},
		"LookupRemote failure": func() {
			_, _ = e.t.LookupRemote(bad, e.pd, 0, AccessRemoteWrite, base, 1)
			_, _ = e.t.LookupRemote(key, e.pd, 0, AccessRemoteWrite, base-1, 1)
		},
		"Segment": func() {
			s, _ := e.t.LookupLocal(key, e.pd, 0, base, 9000)
			for off := uint64(0); off < s.Len(); off += uint64(len(s.Segment(off))) {
			}
			s.Release()
		},
		"Gather": func() {
			c.Reset(sges)
			_ = e.t.Gather(pkt, &c, e.pd)
			_ = e.t.Gather(pkt, &c, e.pd)
		},
		"Scatter": func() {
			c.Reset(sges)
			_ = e.t.Scatter(&c, e.pd, pkt)
			_ = c.Seek(1)
			_ = e.t.Scatter(&c, e.pd, pkt[:100])
		},
		"Atomics": func() {
			_, _ = e.t.FetchAdd(key, e.pd, 0, base, 1)
			_, _ = e.t.CompareSwap(key, e.pd, 0, base, 1, 2)
			_ = e.t.AtomicWrite(key, e.pd, 0, base, [8]byte{})
			_ = e.t.Flush(key, e.pd, 0, AccessFlushGlobal, FlushRange, base, 10)
		},
		"RegFast+LocalInvalidate": func() {
			fk = IncKey(fk)
			r := FastReg{Key: fk, Access: AccessRemoteRead, Length: 4 * 4096, PageSize: 4096, Pages: pl}
			_ = e.t.RegFast(e.pd, &r)
			_ = e.t.LocalInvalidate(e.pd, 0, fk)
		},
		"BindMW+RemoteInvalidate": func() {
			nk := IncKey(wk)
			_ = e.t.RemoteInvalidate(e.pd, 3, wk)
			_ = e.t.BindMW(e.pd, 3, &Bind{MWKey: wk, NewKey: nk, MRKey: key, Addr: base, Length: 8192, Access: AccessRemoteRead})
			wk = nk
		},
	}
	for name, f := range cases {
		assert.Equal(t, float64(0), testing.AllocsPerRun(100, f), "%s: allocations per run", name)
	}
	// The cases really succeeded (AllocsPerRun hides errors).
	s, err := e.t.LookupRemote(wk, e.pd, 3, AccessRemoteRead, base, 1)
	require.NoError(t, err)
	s.Release()
	require.Equal(t, false, fm.Valid())
}

func BenchmarkCopyIn(b *testing.B) {
	for _, size := range []int{1024, 4096, 64 << 10} {
		b.Run(byteSize(size), func(b *testing.B) {
			e := newEnv(b)
			buf := make([]byte, 1<<20)
			m := e.reg(b, buf, AccessLocalWrite|AccessRemoteWrite)
			key, base := m.RKey(), m.IOVA()
			pkt := make([]byte, size)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			var off uint64
			for b.Loop() {
				s, err := e.t.LookupRemote(key, e.pd, 0, AccessRemoteWrite, base+off, uint64(size))
				if err != nil {
					b.Fatal(err)
				}
				s.CopyIn(0, pkt)
				s.Release()
				off = (off + uint64(size)) % (1<<20 - uint64(size))
			}
		})
	}
}

func BenchmarkGather(b *testing.B) {
	e := newEnv(b)
	buf := make([]byte, 1<<20)
	m := e.reg(b, buf, AccessLocalWrite)
	sges := []SGE{{Addr: m.IOVA(), Length: 1 << 19, LKey: m.LKey()}, {Addr: m.IOVA() + 1<<19, Length: 1 << 19, LKey: m.LKey()}}
	pkt := make([]byte, 4096)
	var c Cursor
	c.Reset(sges)
	b.SetBytes(4096)
	b.ReportAllocs()
	for b.Loop() {
		if c.Remaining() < 4096 {
			c.Reset(sges)
		}
		if err := e.t.Gather(pkt, &c, e.pd); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFetchAdd(b *testing.B) {
	e := newEnv(b)
	w := make([]uint64, 1)
	m := e.reg(b, unsafeBytes(w), AccessLocalWrite|AccessRemoteAtomic)
	key, va := m.RKey(), m.IOVA()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := e.t.FetchAdd(key, e.pd, 0, va, 1); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func byteSize(n int) string {
	if n >= 1024 {
		return strconv.Itoa(n/1024) + "KiB"
	}
	return strconv.Itoa(n) + "B"
}
