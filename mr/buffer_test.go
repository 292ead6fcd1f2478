package mr

import (
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

func TestAllocBuffer(t *testing.T) {
	b, err := AllocBuffer(10000, BufferOptions{})
	noErr(t, err)
	mem := b.Bytes()
	eq(t, 10000, len(mem))
	eq(t, uintptr(0), addrOf(mem)%uintptr(os.Getpagesize()))
	eq(t, os.Getpagesize(), b.PageSize())
	check(t, !b.HugePages() && !b.Locked())
	for _, v := range mem {
		if v != 0 {
			t.Fatal("not zeroed")
		}
	}
	pattern(mem, 3)

	e := newEnv(t)
	m := e.reg(t, mem[100:], AccessRemoteRead)
	m2 := e.reg(t, mem[:50], 0)
	isErr(t, b.Free(), ErrBufferInUse)
	got, err := readAll(t, e.t, m.RKey(), e.pd, 0, m.IOVA(), 9900)
	noErr(t, err)
	eq(t, string(mem[100:]), string(got))
	noErr(t, m.DeregMR())
	isErr(t, b.Free(), ErrBufferInUse)
	noErr(t, m2.DeregMR())
	noErr(t, b.Free())
	isErr(t, b.Free(), ErrDestroyed)
	check(t, b.Bytes() == nil)

	_, err = AllocBuffer(0, BufferOptions{})
	isErr(t, err, ErrBufferSize)
	_, err = AllocBuffer(-1, BufferOptions{})
	isErr(t, err, ErrBufferSize)
}

func TestBufferPinnedByFastRegAndRereg(t *testing.T) {
	b, err := AllocBuffer(3*4096, BufferOptions{})
	noErr(t, err)
	mem := b.Bytes()
	e := newEnv(t)
	fm, _ := e.t.AllocMR(e.pd, 2)
	k := IncKey(fm.LKey())
	noErr(t, e.t.RegFast(e.pd, &FastReg{Key: k, Length: 8192, PageSize: 4096, Pages: [][]byte{mem[8192:], mem[:4096]}}))
	isErr(t, b.Free(), ErrBufferInUse)
	noErr(t, e.t.LocalInvalidate(e.pd, 0, k))

	m := e.reg(t, mem, 0)
	isErr(t, b.Free(), ErrBufferInUse)
	noErr(t, m.ReregMR(ReregChangeTranslation, nil, make([]byte, 10), 0))
	noErr(t, b.Free())
}

func TestAllocBufferHugeAndLocked(t *testing.T) {
	b, err := AllocBuffer(3<<20, BufferOptions{HugePages: true})
	noErr(t, err)
	eq(t, 3<<20, len(b.Bytes()))
	if b.HugePages() {
		eq(t, HugePageSize, b.PageSize())
		eq(t, uintptr(0), addrOf(b.Bytes())%HugePageSize)
	} else {
		eq(t, os.Getpagesize(), b.PageSize()) // fell back to normal pages
	}
	e := newEnv(t)
	m := e.reg(t, b.Bytes(), AccessLocalWrite)
	eq(t, b.PageSize(), 1<<m.pt.shift)
	noErr(t, m.DeregMR())
	noErr(t, b.Free())

	l, err := AllocBuffer(8192, BufferOptions{Lock: true})
	if errors.Is(err, unix.ENOMEM) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EAGAIN) {
		t.Skip("mlock not permitted here:", err)
	}
	noErr(t, err)
	check(t, l.Locked())
	noErr(t, l.Free())
}
