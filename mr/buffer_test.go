package mr

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestAllocBuffer(t *testing.T) {
	b, err := AllocBuffer(10000, BufferOptions{})
	require.NoError(t, err)
	mem := b.Bytes()
	require.Equal(t, 10000, len(mem))
	require.Equal(t, uintptr(0), addrOf(mem)%uintptr(os.Getpagesize()))
	require.Equal(t, os.Getpagesize(), b.PageSize())
	require.True(t, !b.HugePages() && !b.Locked())
	require.True(t, bytes.Equal(mem, make([]byte, len(mem))), "not zeroed")
	pattern(mem, 3)

	e := newEnv(t)
	m := e.reg(t, mem[100:], AccessRemoteRead)
	m2 := e.reg(t, mem[:50], 0)
	require.ErrorIs(t, b.Free(), ErrBufferInUse)
	got, err := readAll(t, e.t, m.RKey(), e.pd, 0, m.IOVA(), 9900)
	require.NoError(t, err)
	require.Equal(t, string(mem[100:]), string(got))
	require.NoError(t, m.DeregMR())
	require.ErrorIs(t, b.Free(), ErrBufferInUse)
	require.NoError(t, m2.DeregMR())
	require.NoError(t, b.Free())
	require.ErrorIs(t, b.Free(), ErrDestroyed)
	require.True(t, b.Bytes() == nil)

	_, err = AllocBuffer(0, BufferOptions{})
	require.ErrorIs(t, err, ErrBufferSize)
	_, err = AllocBuffer(-1, BufferOptions{})
	require.ErrorIs(t, err, ErrBufferSize)
}

func TestBufferPinnedByFastRegAndRereg(t *testing.T) {
	b, err := AllocBuffer(3*4096, BufferOptions{})
	require.NoError(t, err)
	mem := b.Bytes()
	e := newEnv(t)
	fm, _ := e.t.AllocMR(e.pd, 2)
	k := IncKey(fm.LKey())
	require.NoError(t, e.t.RegFast(e.pd, &FastReg{Key: k, Length: 8192, PageSize: 4096, Pages: [][]byte{mem[8192:], mem[:4096]}}))
	require.ErrorIs(t, b.Free(), ErrBufferInUse)
	require.NoError(t, e.t.LocalInvalidate(e.pd, 0, k))

	m := e.reg(t, mem, 0)
	require.ErrorIs(t, b.Free(), ErrBufferInUse)
	require.NoError(t, m.ReregMR(ReregChangeTranslation, nil, make([]byte, 10), 0))
	require.NoError(t, b.Free())
}

func TestAllocBufferHugeAndLocked(t *testing.T) {
	b, err := AllocBuffer(3<<20, BufferOptions{HugePages: true})
	require.NoError(t, err)
	require.Equal(t, 3<<20, len(b.Bytes()))
	if b.HugePages() {
		require.Equal(t, HugePageSize, b.PageSize())
		require.Equal(t, uintptr(0), addrOf(b.Bytes())%HugePageSize)
	} else {
		require.Equal(t, os.Getpagesize(), b.PageSize()) // fell back to normal pages
	}
	e := newEnv(t)
	m := e.reg(t, b.Bytes(), AccessLocalWrite)
	require.Equal(t, b.PageSize(), 1<<m.pt.shift)
	require.NoError(t, m.DeregMR())
	require.NoError(t, b.Free())

	l, err := AllocBuffer(8192, BufferOptions{Lock: true})
	if errors.Is(err, unix.ENOMEM) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EAGAIN) {
		t.Skip("mlock not permitted here:", err)
	}
	require.NoError(t, err)
	require.True(t, l.Locked())
	require.NoError(t, l.Free())
}
