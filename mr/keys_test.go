package mr

import "testing"

func TestKeyLayout(t *testing.T) {
	k := MakeKey(0x12345, 0xab)
	eq(t, uint32(0x012345ab), k)
	eq(t, uint32(0x12345), KeyIndex(k))
	eq(t, uint8(0xab), KeyVariant(k))
	eq(t, uint32(0x01234500), IncKey(MakeKey(0x12345, 0xff)))
	eq(t, uint32(0x012345ac), IncKey(k))

	check(t, !IsMR(MakeKey(0, 1)))
	check(t, IsMR(MakeKey(MinMRIndex, 0)))
	check(t, IsMR(MakeKey(MaxMRIndex, 0xff)))
	check(t, !IsMW(MakeKey(MaxMRIndex, 0xff)))
	check(t, IsMW(MakeKey(MinMWIndex, 0)))
	check(t, IsMW(MakeKey(MaxMWIndex, 0xff)))
	check(t, !IsMW(MakeKey(MaxMWIndex+1, 0)))
	check(t, !IsMR(MakeKey(MaxMWIndex+1, 0)))
	eq(t, 1<<19, MaxMR)
	eq(t, 1<<19, MaxMW)
}

func TestNextVariantNeverRepeats(t *testing.T) {
	for prev := range 256 {
		seen := map[uint8]bool{}
		for range 2000 {
			v := nextVariant(uint8(prev))
			ne(t, uint8(prev), v)
			seen[v] = true
		}
		check(t, len(seen) > 200, "variants should be spread, prev ", prev)
	}
}

func TestKeysAreInTheirRanges(t *testing.T) {
	e := newEnv(t)
	m := e.reg(t, make([]byte, 16), 0)
	fm, err := e.t.AllocMR(e.pd, 4)
	noErr(t, err)
	w, err := e.t.AllocMW(e.pd, MWType2)
	noErr(t, err)
	check(t, IsMR(m.LKey()))
	eq(t, m.LKey(), m.RKey())
	check(t, IsMR(fm.LKey()))
	check(t, IsMW(w.RKey()))
	ne(t, KeyIndex(m.LKey()), KeyIndex(fm.LKey()))
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
			ne(t, old, k, "variant must change on index reuse")
			_, err := readAll(t, e.t, old, e.pd, 0, uint64(addrOf(buf)), 8)
			isErr(t, err, ErrKeyInvalid)
		}
		_, err := readAll(t, e.t, k, e.pd, 0, uint64(addrOf(buf)), 8)
		noErr(t, err)
		seen[KeyIndex(k)] = k
		noErr(t, m.DeregMR())
		_, err = readAll(t, e.t, k, e.pd, 0, uint64(addrOf(buf)), 8)
		isErr(t, err, ErrKeyInvalid)
	}
}

func TestTableFull(t *testing.T) {
	e := newEnv(t)
	e.t.mrs.init(MinMRIndex, MinMRIndex+1)
	e.reg(t, make([]byte, 8), 0)
	m2 := e.reg(t, make([]byte, 8), 0)
	_, err := e.t.RegMR(e.pd, make([]byte, 8), 0)
	isErr(t, err, ErrTableFull)
	noErr(t, m2.DeregMR())
	e.reg(t, make([]byte, 8), 0)
}
