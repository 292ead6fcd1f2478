//go:build linux

package main

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Everything the kernel reads or writes through an address (message headers, I/O vectors,
// control space, datagram buffers) lives in anonymous mappings outside the Go heap, so that
// neither the garbage collector nor a stack move can disturb memory an SQE points at.

func mmapAnon(n int) ([]byte, error) {
	b, err := unix.Mmap(-1, 0, max(n, 1), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_POPULATE)
	if err != nil {
		return nil, fmt.Errorf("mmap %d bytes: %w", n, err)
	}
	return b, nil
}

func addrOf(b []byte) uint64 { return uint64(uintptr(unsafe.Pointer(&b[0]))) }

// arena hands out pieces of one mapping, 8-byte aligned.
type arena struct {
	mem []byte
	off int
}

func newArena(n int) (*arena, error) {
	m, err := mmapAnon(n)
	if err != nil {
		return nil, err
	}
	return &arena{mem: m}, nil
}

func (a *arena) bytes(n int) []byte {
	n = (n + 7) &^ 7
	if a.off+n > len(a.mem) {
		panic(fmt.Sprintf("arena of %d bytes exhausted", len(a.mem)))
	}
	b := a.mem[a.off : a.off+n : a.off+n]
	a.off += n
	return b
}

func (a *arena) free() { _ = unix.Munmap(a.mem) }

// iovec, msghdr and mmsghdr are the kernel's structures with addresses as plain integers: they
// point into arenas, never at Go memory.
type iovec struct{ base, len uint64 }

type msghdr struct {
	name       uint64
	namelen    uint32
	_          uint32
	iov        uint64
	iovlen     uint64
	control    uint64
	controllen uint64
	flags      int32
	_          int32
}

type mmsghdr struct {
	hdr msghdr
	n   uint32
	_   uint32
}

type cmsghdr struct {
	len          uint64
	level, ctype int32
}

func arenaSlice[T any](a *arena, n int) []T {
	var t T
	b := a.bytes(n * int(unsafe.Sizeof(t)))
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n)
}

// udpSocket opens a blocking UDP socket bound to addr (port 0 picks one) with large buffers,
// connected to peer when peer is valid.
func udpSocket(addr netip.Addr) (int, netip.AddrPort, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, netip.AddrPort{}, err
	}
	for _, o := range []int{unix.SO_RCVBUF, unix.SO_SNDBUF} {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, o, 4<<20); err != nil {
			unix.Close(fd)
			return -1, netip.AddrPort{}, err
		}
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: addr.As4()}); err != nil {
		unix.Close(fd)
		return -1, netip.AddrPort{}, fmt.Errorf("bind %v: %w", addr, err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		unix.Close(fd)
		return -1, netip.AddrPort{}, err
	}
	return fd, netip.AddrPortFrom(addr, uint16(sa.(*unix.SockaddrInet4).Port)), nil
}

// socketPair opens two sockets on a and b, each connected to the other.
func socketPair(a, b netip.Addr) (fa, fb int, err error) {
	fa, pa, err := udpSocket(a)
	if err != nil {
		return -1, -1, err
	}
	fb, pb, err := udpSocket(b)
	if err != nil {
		unix.Close(fa)
		return -1, -1, err
	}
	err = unix.Connect(fa, &unix.SockaddrInet4{Addr: pb.Addr().As4(), Port: int(pb.Port())})
	if err == nil {
		err = unix.Connect(fb, &unix.SockaddrInet4{Addr: pa.Addr().As4(), Port: int(pa.Port())})
	}
	if err != nil {
		unix.Close(fa)
		unix.Close(fb)
		return -1, -1, err
	}
	return fa, fb, nil
}

// Control space for one int (UDP_GRO on receive) or one uint16 (UDP_SEGMENT on send).
const cmsgSpace = 24

// putSegment writes a UDP_SEGMENT control message of segment size seg into b (cmsgSpace bytes).
func putSegment(b []byte, seg uint16) {
	h := (*cmsghdr)(unsafe.Pointer(&b[0]))
	h.len = 16 + 2
	h.level = unix.SOL_UDP
	h.ctype = unix.UDP_SEGMENT
	binary.NativeEndian.PutUint16(b[16:], seg)
}

// groSegment returns the segment size of a UDP_GRO control message in ctl, or 0 if there is none.
func groSegment(ctl []byte) int {
	for len(ctl) >= 16 {
		h := (*cmsghdr)(unsafe.Pointer(&ctl[0]))
		if h.len < 16 || int(h.len) > len(ctl) {
			return 0
		}
		if h.level == unix.SOL_UDP && h.ctype == unix.UDP_GRO && h.len >= 20 {
			return int(binary.NativeEndian.Uint32(ctl[16:]))
		}
		ctl = ctl[(h.len+7)&^7:]
	}
	return 0
}

// mmsgBatch is a recvmmsg or sendmmsg vector over arena buffers.
type mmsgBatch struct {
	hdrs  []mmsghdr
	iovs  []iovec
	bufs  [][]byte
	ctls  [][]byte
	calls uint64 // system calls made
	empty uint64 // receives that found nothing
}

// newBatch prepares n messages of one buffer of size bytes each, with control space if ctl.
func newBatch(a *arena, n, size int, ctl bool) *mmsgBatch {
	b := &mmsgBatch{hdrs: arenaSlice[mmsghdr](a, n), iovs: arenaSlice[iovec](a, n), bufs: make([][]byte, n), ctls: make([][]byte, n)}
	for i := range n {
		b.bufs[i] = a.bytes(size)
		b.iovs[i] = iovec{base: addrOf(b.bufs[i]), len: uint64(size)}
		b.hdrs[i].hdr.iov = uint64(uintptr(unsafe.Pointer(&b.iovs[i])))
		b.hdrs[i].hdr.iovlen = 1
		if ctl {
			b.ctls[i] = a.bytes(cmsgSpace)
		}
	}
	return b
}

// recv is one recvmmsg(MSG_DONTWAIT) for up to all messages; 0 when nothing was there.
func (b *mmsgBatch) recv(fd int) (int, error) {
	for i := range b.hdrs {
		h := &b.hdrs[i].hdr
		h.controllen = 0
		if b.ctls[i] != nil {
			h.control, h.controllen = addrOf(b.ctls[i]), cmsgSpace
		}
	}
	b.calls++
	n, _, errno := unix.RawSyscall6(unix.SYS_RECVMMSG, uintptr(fd), uintptr(unsafe.Pointer(&b.hdrs[0])), uintptr(len(b.hdrs)), unix.MSG_DONTWAIT, 0, 0)
	if errno == unix.EAGAIN {
		b.empty++
		return 0, nil
	}
	if errno != 0 {
		return 0, fmt.Errorf("recvmmsg: %w", errno)
	}
	return int(n), nil
}

// send is sendmmsg of the first n messages, each carrying length bytes of its buffer (and, when
// seg > 0, a UDP_SEGMENT control message: the kernel cuts the buffer into seg-byte datagrams).
// It returns how many messages left.
func (b *mmsgBatch) send(fd, n, length int, seg uint16) (int, error) {
	for i := range n {
		b.iovs[i].len = uint64(length)
		h := &b.hdrs[i].hdr
		h.control, h.controllen = 0, 0
		if seg > 0 {
			putSegment(b.ctls[i], seg)
			h.control, h.controllen = addrOf(b.ctls[i]), cmsgSpace
		}
	}
	b.calls++
	// A blocking socket: the call may sleep while the send buffer is full.
	r, _, errno := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(fd), uintptr(unsafe.Pointer(&b.hdrs[0])), uintptr(n), 0, 0, 0)
	if errno != 0 {
		return 0, fmt.Errorf("sendmmsg: %w", errno)
	}
	return int(r), nil
}
