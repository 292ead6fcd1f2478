package mr

import (
	"errors"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// HugePageSize is the huge page size AllocBuffer asks for with MAP_HUGETLB (the x86-64 default).
const HugePageSize = 2 << 20

// maxBufferSize keeps size rounding far from overflow.
const maxBufferSize = 1 << 46

// BufferOptions selects how AllocBuffer backs its memory.
type BufferOptions struct {
	// HugePages asks for MAP_HUGETLB pages; when none are available the buffer falls back to normal
	// pages with a transparent-huge-page hint.
	HugePages bool
	// Lock mlocks the buffer so it is never swapped, as pinned RDMA memory would be. Failure (for
	// example RLIMIT_MEMLOCK) is reported, not ignored.
	Lock bool
}

// Buffer is page-aligned memory mapped outside the Go heap, suitable for registration. Regions
// registered over it pin it: Free fails with ErrBufferInUse until they are deregistered, so a
// registration can never reach unmapped memory.
type Buffer struct {
	mem      []byte // the whole mapping
	size     int
	pageSize int
	huge     bool
	locked   bool
	pins     atomic.Int32 // registrations referencing the buffer
	freed    bool         // guarded by buffers.mu
}

// buffers indexes live Buffers by address so registrations can find and pin the one they use.
var buffers struct {
	mu   sync.RWMutex
	list []*Buffer // sorted by base address
}

// AllocBuffer maps size bytes of zeroed, page-aligned anonymous memory.
func AllocBuffer(size int, opts BufferOptions) (*Buffer, error) {
	if size <= 0 || size > maxBufferSize {
		return nil, opErr("alloc_buffer", 0, ErrBufferSize)
	}
	b := &Buffer{size: size, pageSize: os.Getpagesize()}
	const prot = unix.PROT_READ | unix.PROT_WRITE
	const flags = unix.MAP_PRIVATE | unix.MAP_ANONYMOUS
	var err error
	if opts.HugePages {
		n := roundUp(size, HugePageSize)
		if b.mem, err = mmapHuge(n, prot, flags); err == nil {
			b.huge, b.pageSize = true, HugePageSize
		} else if b.mem, err = unix.Mmap(-1, 0, n, prot, flags); err == nil {
			adviseHuge(b.mem)
		}
	} else {
		b.mem, err = unix.Mmap(-1, 0, roundUp(size, b.pageSize), prot, flags)
	}
	if err != nil {
		return nil, &Error{Op: "alloc_buffer", Err: err}
	}
	if opts.Lock {
		if err := unix.Mlock(b.mem); err != nil {
			_ = unix.Munmap(b.mem)
			return nil, &Error{Op: "alloc_buffer", Err: err}
		}
		b.locked = true
	}
	buffers.mu.Lock()
	i, _ := slices.BinarySearchFunc(buffers.list, b.base(), cmpBufferBase)
	buffers.list = slices.Insert(buffers.list, i, b)
	buffers.mu.Unlock()
	return b, nil
}

func roundUp(n, to int) int { return (n + to - 1) &^ (to - 1) }

func cmpBufferBase(b *Buffer, addr uintptr) int {
	switch base := b.base(); {
	case base < addr:
		return -1
	case base > addr:
		return 1
	}
	return 0
}

func (b *Buffer) base() uintptr { return addrOf(b.mem) }

// Bytes returns the buffer's memory (exactly the requested size), or nil after Free.
func (b *Buffer) Bytes() []byte {
	buffers.mu.RLock()
	defer buffers.mu.RUnlock()
	if b.freed {
		return nil
	}
	return b.mem[:b.size:b.size]
}

// PageSize is the size of the pages backing the buffer; regions registered over it use it as their
// page size.
func (b *Buffer) PageSize() int { return b.pageSize }

// HugePages reports whether MAP_HUGETLB pages back the buffer.
func (b *Buffer) HugePages() bool { return b.huge }

// Locked reports whether the buffer is mlocked.
func (b *Buffer) Locked() bool { return b.locked }

// Free unmaps the buffer. It fails with ErrBufferInUse while a registration references it and with
// ErrDestroyed when called twice. Slices obtained from Bytes must not be used afterwards.
func (b *Buffer) Free() error {
	buffers.mu.Lock()
	if b.freed {
		buffers.mu.Unlock()
		return opErr("free_buffer", 0, ErrDestroyed)
	}
	if b.pins.Load() != 0 {
		buffers.mu.Unlock()
		return opErr("free_buffer", 0, ErrBufferInUse)
	}
	b.freed = true
	if i, ok := slices.BinarySearchFunc(buffers.list, b.base(), cmpBufferBase); ok {
		buffers.list = slices.Delete(buffers.list, i, i+1)
	}
	buffers.mu.Unlock()
	if err := unix.Munmap(b.mem); err != nil {
		return &Error{Op: "free_buffer", Err: errors.Join(ErrDestroyed, err)}
	}
	return nil
}

// pinBuffer finds the live Buffer holding all of p and pins it; nil when p is ordinary Go memory.
// Allocation-free, so fast registration may call it per page.
func pinBuffer(p []byte) *Buffer {
	if len(p) == 0 {
		return nil
	}
	addr := addrOf(p)
	buffers.mu.RLock()
	defer buffers.mu.RUnlock()
	i, ok := slices.BinarySearchFunc(buffers.list, addr, cmpBufferBase)
	if !ok {
		i--
	}
	if i < 0 {
		return nil
	}
	b := buffers.list[i]
	if addr+uintptr(len(p)) > b.base()+uintptr(len(b.mem)) {
		return nil
	}
	b.pins.Add(1)
	return b
}

// unpin releases a pin taken by pinBuffer; nil is a no-op.
func (b *Buffer) unpin() {
	if b != nil {
		b.pins.Add(-1)
	}
}

// addrOf is the address of a slice's first byte: the iova of a plain registration, and the
// identity of a memory word for atomics.
func addrOf(p []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(p))) }
