package mr

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

const guard = 64

// arenaModel keeps page arenas (guard + page + guard), their original content, and a flat reference
// copy of the region, so a test can verify that exactly the expected bytes changed.
type arenaModel struct {
	ps     int
	arenas [][]byte
	orig   [][]byte
	offset uint64 // first byte offset of the region in page 0
	ref    []byte // expected region content
}

func newArenaModel(rng *rand.Rand, npages, ps int, offset, length uint64) *arenaModel {
	a := &arenaModel{ps: ps, offset: offset}
	fill := rand.NewChaCha8([32]byte{byte(rng.Uint32()), byte(npages)})
	for range npages {
		ar := make([]byte, guard+ps+guard)
		_, _ = fill.Read(ar)
		a.arenas = append(a.arenas, ar)
		a.orig = append(a.orig, bytes.Clone(ar))
	}
	a.ref = make([]byte, length)
	a.project(a.ref, false)
	return a
}

// project copies between the region bytes of the arenas and b (toArenas selects the direction).
func (a *arenaModel) project(b []byte, toArenas bool) {
	for off := uint64(0); off < uint64(len(b)); {
		x := off + a.offset
		p := a.arenas[x/uint64(a.ps)][guard+x%uint64(a.ps) : guard+a.ps]
		var n int
		if toArenas {
			n = copy(p, b[off:])
		} else {
			n = copy(b[off:], p)
		}
		off += uint64(n)
	}
}

func (a *arenaModel) pages() [][]byte {
	p := make([][]byte, len(a.arenas))
	for i, ar := range a.arenas {
		p[i] = ar[guard : guard+a.ps]
	}
	return p
}

// verify checks that the arenas equal their original content with the region replaced by ref.
func (a *arenaModel) verify(t *testing.T) {
	t.Helper()
	got := a.arenas
	a.arenas = make([][]byte, len(a.orig))
	for i := range a.orig {
		a.arenas[i] = bytes.Clone(a.orig[i])
	}
	a.project(a.ref, true)
	want := a.arenas
	a.arenas = got
	for i := range got {
		require.True(t, bytes.Equal(got[i], want[i]), "page %d differs from the model (write outside the region or lost write)", i)
	}
}

// exercise runs random lookups against a region of length bytes at iova and compares with the model.
func exercise(t *testing.T, rng *rand.Rand, e env, key uint32, iova, length uint64, a *arenaModel) {
	t.Helper()
	for range 40 {
		va := iova - 64 + rng.Uint64N(length+128)
		n := rng.Uint64N(min(length, 3*uint64(a.ps)) + 64)
		inside := va >= iova && va+n <= iova+length && va+n >= va
		s, err := e.t.LookupRemote(key, e.pd, 0, AccessRemoteWrite|AccessRemoteRead, va, n)
		if n == 0 { // C9-88: no check at all
			require.NoError(t, err)
			require.Equal(t, 0, s.CopyIn(0, []byte{1}))
			continue
		}
		if !inside {
			require.ErrorIs(t, err, ErrOutOfRange, "va %d n %d", va-iova, n)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, n, s.Len())
		off := va - iova
		got := make([]byte, n)
		require.Equal(t, int(n), s.CopyOut(got, 0))
		require.True(t, bytes.Equal(got, a.ref[off:off+n]), "read at +%d len %d differs", off, n)
		// Segments tile the span exactly.
		var total uint64
		for o := uint64(0); o < n; {
			seg := s.Segment(o)
			require.True(t, len(seg) > 0 && len(seg) <= a.ps, "segment length %d", len(seg))
			o += uint64(len(seg))
			total += uint64(len(seg))
		}
		require.Equal(t, n, total)
		require.Equal(t, 0, len(s.Segment(n)))
		src := make([]byte, n+3)
		_, _ = rand.NewChaCha8([32]byte{byte(n), byte(off)}).Read(src)
		copy(a.ref[off:off+n], src)
		// Writing past the span is clipped, never reaching beyond it.
		require.Equal(t, int(n), s.CopyIn(0, src))
		s.Release()
	}
	a.verify(t)
}

func TestFastRegTranslationProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	e := newEnv(t)
	m, err := e.t.AllocMR(e.pd, 8)
	require.NoError(t, err)
	key := m.LKey()
	for range 100 {
		ps := 1 << (12 + rng.IntN(4))
		npages := 1 + rng.IntN(8)
		offset := rng.Uint64N(uint64(ps))
		minLen := uint64(1)
		if npages > 1 {
			minLen = uint64((npages-1)*ps) - offset + 1
		}
		maxLen := uint64(npages*ps) - offset
		length := minLen + rng.Uint64N(maxLen-minLen+1)
		iova := rng.Uint64N(1 << 62)
		a := newArenaModel(rng, npages, ps, offset, length)
		key = IncKey(key)
		require.NoError(t, e.t.RegFast(e.pd, &FastReg{Key: key, Access: allRemote, IOVA: iova, Length: length,
			PageSize: ps, Offset: offset, Pages: a.pages()}))
		exercise(t, rng, e, key, iova, length, a)
		require.NoError(t, e.t.LocalInvalidate(e.pd, 0, key))
	}
}

func TestUserRegTranslationProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	e := newEnv(t)
	for range 100 {
		// One arena holding the whole buffer; the model is the arena itself.
		size := 1 + rng.IntN(5*DefaultPageSize)
		a := newArenaModel(rng, 1, size, 0, uint64(size))
		buf := a.arenas[0][guard : guard+size]
		iova := rng.Uint64N(1 << 62)
		access := allRemote
		if rng.IntN(2) == 0 {
			access |= AccessZeroBased
			iova = 0
		}
		m, err := e.t.RegMRIOVA(e.pd, buf, iova, access)
		require.NoError(t, err)
		require.Equal(t, uint64(size), m.Length())
		exercise(t, rng, e, m.RKey(), iova, uint64(size), a)
		require.NoError(t, m.DeregMR())
	}
}

func TestRegMRUsesBufferAddress(t *testing.T) {
	e := newEnv(t)
	buf := pattern(make([]byte, 3*DefaultPageSize+100), 9)
	sub := buf[1000:] // not page aligned
	m := e.reg(t, sub, AccessRemoteRead)
	require.Equal(t, uint64(addrOf(sub)), m.IOVA())
	got, err := readAll(t, e.t, m.RKey(), e.pd, 0, m.IOVA()+5000, 4000)
	require.NoError(t, err)
	require.True(t, bytes.Equal(sub[5000:9000], got))

	z, err := e.t.RegMR(e.pd, sub, AccessRemoteRead|AccessZeroBased)
	require.NoError(t, err)
	require.Equal(t, uint64(0), z.IOVA())
	got, err = readAll(t, e.t, z.RKey(), e.pd, 0, 0, len(sub))
	require.NoError(t, err)
	require.True(t, bytes.Equal(sub, got))

	_, err = e.t.RegMRIOVA(e.pd, sub, 5, AccessZeroBased)
	require.ErrorIs(t, err, ErrZeroBased)
	_, err = e.t.RegMR(e.pd, nil, 0)
	require.ErrorIs(t, err, ErrEmpty)
	_, err = e.t.RegMRIOVA(e.pd, sub, ^uint64(0)-10, 0)
	require.ErrorIs(t, err, ErrOutOfRange)
	_, err = e.t.RegMR(nil, sub, 0)
	require.ErrorIs(t, err, ErrInvalidPD)
	other := NewTable()
	opd, _ := other.AllocPD()
	_, err = e.t.RegMR(opd, sub, 0)
	require.ErrorIs(t, err, ErrInvalidPD)
}

func TestPageShift(t *testing.T) {
	for _, ok := range []int{4096, 8192, 1 << 21, 1 << 31} {
		_, err := pageShift(ok)
		require.NoError(t, err, ok)
	}
	for _, bad := range []int{0, -4096, 2048, 4095, 6144, 1 << 32} {
		_, err := pageShift(bad)
		require.ErrorIs(t, err, ErrPageSize, bad)
	}
}

func FuzzLookupRemote(f *testing.F) {
	f.Add(uint32(0), uint64(0), uint64(8), uint16(0))
	f.Add(uint32(1), uint64(4090), uint64(9000), uint16(3))
	f.Add(uint32(0xffffffff), ^uint64(0), ^uint64(0), uint16(0xffff))
	e := newEnv(f)
	a := newArenaModel(rand.New(rand.NewPCG(5, 6)), 3, 4096, 100, 3*4096-100-7)
	m, err := e.t.AllocMR(e.pd, 3)
	require.NoError(f, err)
	key := IncKey(m.LKey())
	const iova, length = 1 << 40, 3*4096 - 100 - 7
	require.NoError(f, e.t.RegFast(e.pd, &FastReg{Key: key, Access: allRemote, IOVA: iova, Length: length,
		PageSize: 4096, Offset: 100, Pages: a.pages()}))
	f.Fuzz(func(t *testing.T, keyXor uint32, vaOff, n uint64, access uint16) {
		k := key ^ keyXor
		va := iova + vaOff
		need := Access(access) & (AccessRemoteRead | AccessRemoteWrite | AccessRemoteAtomic)
		s, err := e.t.LookupRemote(k, e.pd, 0, need, va, n)
		defer s.Release()
		zeroRW := n == 0 && need != 0 && need&^(AccessRemoteRead|AccessRemoteWrite) == 0
		inside := va >= iova && n <= length && va-iova <= length-n
		switch {
		case zeroRW:
			require.NoError(t, err)
		case keyXor != 0:
			require.True(t, err != nil, "foreign key accepted")
		case !inside:
			require.ErrorIs(t, err, ErrOutOfRange)
		default:
			require.NoError(t, err)
			buf := make([]byte, n)
			require.Equal(t, len(buf), s.CopyOut(buf, 0))
			require.True(t, bytes.Equal(buf, a.ref[va-iova:va-iova+n]), "bytes differ")
		}
	})
}
