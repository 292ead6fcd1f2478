package mr

import (
	"encoding/binary"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// atomicTargets returns rkeys and iovas of three 8-byte words: aligned in memory (sync/atomic path),
// misaligned in memory (striped lock path) and split across two pages of a fast-reg page list.
func atomicTargets(t *testing.T, e env) (keys []uint32, iovas []uint64, read []func() uint64) {
	const acc = AccessLocalWrite | AccessRemoteAtomic | AccessRemoteWrite
	aligned := make([]uint64, 4) // 8-byte aligned backing
	ab := unsafeBytes(aligned)
	m := e.reg(t, ab, acc)
	keys = append(keys, m.RKey())
	iovas = append(iovas, m.IOVA()+8)
	read = append(read, func() uint64 { return binary.NativeEndian.Uint64(ab[8:]) })

	mis := make([]byte, 64)
	ma, err := e.t.RegMRIOVA(e.pd, mis[3:], 0x1000, acc)
	require.NoError(t, err)
	keys = append(keys, ma.RKey())
	iovas = append(iovas, 0x1000+8)
	read = append(read, func() uint64 { return binary.NativeEndian.Uint64(mis[3+8:]) })

	pl := pages(2, 4096)
	clear(pl[0][4092:])
	clear(pl[1][:4])
	fm, err := e.t.AllocMR(e.pd, 2)
	require.NoError(t, err)
	k := IncKey(fm.LKey())
	require.NoError(t, e.t.RegFast(e.pd, &FastReg{Key: k, Access: acc, IOVA: 0, Length: 8, PageSize: 4096, Offset: 4092, Pages: pl}))
	keys = append(keys, k)
	iovas = append(iovas, 0)
	read = append(read, func() uint64 {
		return binary.NativeEndian.Uint64(append(append([]byte(nil), pl[0][4092:]...), pl[1][:4]...))
	})
	return keys, iovas, read
}

func TestAtomicsSemantics(t *testing.T) {
	e := newEnv(t)
	keys, iovas, read := atomicTargets(t, e)
	for i := range keys {
		k, va := keys[i], iovas[i]
		old, err := e.t.FetchAdd(k, e.pd, 0, va, 5)
		require.NoError(t, err)
		require.Equal(t, uint64(0), old)
		old, err = e.t.FetchAdd(k, e.pd, 0, va, ^uint64(0)) // -1, wrapping
		require.NoError(t, err)
		require.Equal(t, uint64(5), old)
		require.Equal(t, uint64(4), read[i]())
		old, err = e.t.CompareSwap(k, e.pd, 0, va, 3, 100)
		require.NoError(t, err)
		require.Equal(t, uint64(4), old)
		require.Equal(t, uint64(4), read[i]()) // no swap on mismatch
		old, err = e.t.CompareSwap(k, e.pd, 0, va, 4, 0x0102030405060708)
		require.NoError(t, err)
		require.Equal(t, uint64(4), old)
		require.Equal(t, uint64(0x0102030405060708), read[i]())
		// ATOMIC_WRITE stores the payload bytes as they are.
		require.NoError(t, e.t.AtomicWrite(k, e.pd, 0, va, [8]byte{1, 2, 3, 4, 5, 6, 7, 8}))
		require.Equal(t, binary.NativeEndian.Uint64([]byte{1, 2, 3, 4, 5, 6, 7, 8}), read[i]())
		_, err = e.t.FetchAdd(k, e.pd, 0, va+4, 1)
		if i < 2 {
			require.ErrorIs(t, err, ErrMisaligned)
		} else {
			require.ErrorIs(t, err, ErrOutOfRange) // the key check comes first
		}
	}
	// Host order: on this little-endian machine the low byte is first in memory.
	mem := make([]uint64, 1)
	m := e.reg(t, unsafeBytes(mem), AccessLocalWrite|AccessRemoteAtomic)
	_, err := e.t.FetchAdd(m.RKey(), e.pd, 0, m.IOVA(), 0x0a0b)
	require.NoError(t, err)
	require.Equal(t, uint64(0x0a0b), mem[0])
	_, err = e.t.CompareSwap(m.RKey(), e.pd, 0, m.IOVA()+1, 0, 0)
	require.ErrorIs(t, err, ErrOutOfRange)
	_, err = e.t.CompareSwap(IncKey(m.RKey()), e.pd, 0, m.IOVA()+1, 0, 0)
	require.ErrorIs(t, err, ErrKeyInvalid) // key errors win over misalignment
}

func TestAtomicAccessChecks(t *testing.T) {
	e := newEnv(t)
	buf := make([]uint64, 2)
	ro := e.reg(t, unsafeBytes(buf), AccessLocalWrite|AccessRemoteWrite)
	_, err := e.t.FetchAdd(ro.RKey(), e.pd, 0, ro.IOVA(), 1)
	require.ErrorIs(t, err, ErrAccessDenied)
	_, err = e.t.CompareSwap(ro.RKey(), e.pd, 0, ro.IOVA(), 0, 1)
	require.ErrorIs(t, err, ErrAccessDenied)
	require.NoError(t, e.t.AtomicWrite(ro.RKey(), e.pd, 0, ro.IOVA(), [8]byte{}))
	at := e.reg(t, unsafeBytes(buf), AccessLocalWrite|AccessRemoteAtomic)
	require.ErrorIs(t, e.t.AtomicWrite(at.RKey(), e.pd, 0, at.IOVA(), [8]byte{}), ErrAccessDenied)
	require.ErrorIs(t, e.t.AtomicWrite(ro.RKey(), e.pd, 0, ro.IOVA()+2, [8]byte{}), ErrMisaligned)
}

func TestFlushChecks(t *testing.T) {
	e := newEnv(t)
	buf := make([]byte, 4096)
	g := e.reg(t, buf, AccessFlushGlobal)
	p := e.reg(t, buf, AccessFlushPersistent)
	base := uint64(addrOf(buf))
	require.NoError(t, e.t.Flush(g.RKey(), e.pd, 0, AccessFlushGlobal, FlushRange, base, 4096))
	require.ErrorIs(t, e.t.Flush(g.RKey(), e.pd, 0, AccessFlushPersistent, FlushRange, base, 1), ErrAccessDenied)
	require.ErrorIs(t, e.t.Flush(g.RKey(), e.pd, 0, AccessFlushGlobal|AccessFlushPersistent, FlushRange, base, 1), ErrAccessDenied)
	require.NoError(t, e.t.Flush(p.RKey(), e.pd, 0, AccessFlushPersistent, FlushRange, base+10, 0))
	require.ErrorIs(t, e.t.Flush(g.RKey(), e.pd, 0, AccessFlushGlobal, FlushRange, base+1, 4096), ErrOutOfRange)
	require.NoError(t, e.t.Flush(g.RKey(), e.pd, 0, AccessFlushGlobal, FlushMR, 0, ^uint64(0))) // whole region: no range
	require.ErrorIs(t, e.t.Flush(IncKey(g.RKey()), e.pd, 0, AccessFlushGlobal, FlushMR, 0, 0), ErrKeyInvalid)
	require.ErrorIs(t, e.t.Flush(g.RKey(), e.pd, 0, AccessRemoteRead, FlushRange, base, 1), ErrAccessFlags)
	require.ErrorIs(t, e.t.Flush(g.RKey(), e.pd, 0, 0, FlushRange, base, 1), ErrAccessFlags)
	require.ErrorIs(t, e.t.Flush(g.RKey(), e.pd, 0, AccessFlushGlobal, 2, base, 1), ErrAccessFlags)
	require.Equal(t, int32(0), g.g.holds.Load())
}

func TestAtomicsConcurrent(t *testing.T) {
	e := newEnv(t)
	keys, iovas, read := atomicTargets(t, e)
	const workers, perWorker = 8, 1000
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j := range perWorker {
				for i := range keys {
					if j%2 == 0 {
						if _, err := e.t.FetchAdd(keys[i], e.pd, 0, iovas[i], 1); !assert.NoError(t, err) {
							return
						}
						continue
					}
					// Increment by compare-and-swap retry: lost updates would show in the total.
					for cur := uint64(0); ; {
						old, err := e.t.CompareSwap(keys[i], e.pd, 0, iovas[i], cur, cur+1)
						if !assert.NoError(t, err) {
							return
						}
						if old == cur {
							break
						}
						cur = old
					}
				}
			}
		})
	}
	wg.Wait()
	for i := range keys {
		require.Equal(t, uint64(workers*perWorker), read[i](), "target %d", i)
	}
}
