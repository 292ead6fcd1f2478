package mr

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestKeyLayout(t *testing.T) {
	k := MakeKey(0x12345, 0xab)
	require.Equal(t, uint32(0x012345ab), k)
	require.Equal(t, uint32(0x12345), KeyIndex(k))
	require.Equal(t, uint8(0xab), KeyVariant(k))
	require.Equal(t, uint32(0x01234500), IncKey(MakeKey(0x12345, 0xff)))
	require.Equal(t, uint32(0x012345ac), IncKey(k))

	require.True(t, !IsMR(MakeKey(0, 1)))
	require.True(t, IsMR(MakeKey(MinMRIndex, 0)))
	require.True(t, IsMR(MakeKey(MaxMRIndex, 0xff)))
	require.True(t, !IsMW(MakeKey(MaxMRIndex, 0xff)))
	require.True(t, IsMW(MakeKey(MinMWIndex, 0)))
	require.True(t, IsMW(MakeKey(MaxMWIndex, 0xff)))
	require.True(t, !IsMW(MakeKey(MaxMWIndex+1, 0)))
	require.True(t, !IsMR(MakeKey(MaxMWIndex+1, 0)))
	require.Equal(t, 1<<19, MaxMR)
	require.Equal(t, 1<<19, MaxMW)
}

func TestNextVariantNeverRepeats(t *testing.T) {
	for prev := range 256 {
		seen := map[uint8]bool{}
		for range 2000 {
			v := nextVariant(uint8(prev))
			require.NotEqual(t, uint8(prev), v)
			seen[v] = true
		}
		require.True(t, len(seen) > 200, "variants should be spread, prev %v", prev)
	}
}

func TestKeysAreInTheirRanges(t *testing.T) {
	e := newEnv(t)
	m := e.reg(t, make([]byte, 16), 0)
	fm, err := e.t.AllocMR(e.pd, 4)
	require.NoError(t, err)
	w, err := e.t.AllocMW(e.pd, MWType2)
	require.NoError(t, err)
	require.True(t, IsMR(m.LKey()))
	require.Equal(t, m.LKey(), m.RKey())
	require.True(t, IsMR(fm.LKey()))
	require.True(t, IsMW(w.RKey()))
	require.NotEqual(t, KeyIndex(m.LKey()), KeyIndex(fm.LKey()))
}

func TestStaleKeyAfterIndexReuse(t *testing.T) {
	e := newEnv(t)
	// A table whose MR range is 3 indices forces reuse quickly.
	e.t.mrs.init(MinMRIndex, MinMRIndex+2)
	buf := make([]byte, 64)
	seen := map[uint32]uint32{} // index -> last key
	for range 50 {
		m := e.reg(t, buf, AccessRemoteRead)
		k := m.LKey()
		if old, ok := seen[KeyIndex(k)]; ok {
			require.NotEqual(t, old, k, "variant must change on index reuse")
			_, err := readAll(t, e.t, old, e.pd, 0, uint64(addrOf(buf)), 8)
			require.ErrorIs(t, err, ErrKeyInvalid)
		}
		_, err := readAll(t, e.t, k, e.pd, 0, uint64(addrOf(buf)), 8)
		require.NoError(t, err)
		seen[KeyIndex(k)] = k
		require.NoError(t, m.DeregMR())
		_, err = readAll(t, e.t, k, e.pd, 0, uint64(addrOf(buf)), 8)
		require.ErrorIs(t, err, ErrKeyInvalid)
	}
}

func TestTableFull(t *testing.T) {
	e := newEnv(t)
	e.t.mrs.init(MinMRIndex, MinMRIndex+1)
	e.reg(t, make([]byte, 8), 0)
	m2 := e.reg(t, make([]byte, 8), 0)
	_, err := e.t.RegMR(e.pd, make([]byte, 8), 0)
	require.ErrorIs(t, err, ErrTableFull)
	require.NoError(t, m2.DeregMR())
	e.reg(t, make([]byte, 8), 0)
}
