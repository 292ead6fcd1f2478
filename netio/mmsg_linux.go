package netio

import (
	"net/netip"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The batch system calls are issued directly rather than through x/net's ipv4/ipv6 ReadBatch and
// WriteBatch, because those report each datagram's source as a freshly allocated *net.UDPAddr,
// which would cost two heap allocations per received datagram. The calls still go through the
// socket's syscall.RawConn, so they wait in the Go netpoller and fail cleanly after Close.

// cmsgWords holds up to three control messages in 8-byte words, which keeps each header aligned:
// TOS/traffic class and TTL/hop limit (ints) and UDP_SEGMENT (a uint16) on send, UDP_GRO (an
// int) on receive.
const cmsgWords = 3 * (unix.SizeofCmsghdr + 8) / 8

// batchIovecs bounds the datagrams one sendmmsg call carries. A segmented send takes one I/O
// vector per datagram, or three for one in pieces (Message.Payload), so a call can hold a few
// full segmented sends of either and still stay small.
const batchIovecs = 4 * maxDatagramIovs * IdealBatchSize

// mmsgBatch is the scratch for one sendmmsg or recvmmsg call: headers, I/O vectors, addresses and
// control buffers for up to IdealBatchSize entries. A Sender owns one; the calls made without one
// (Conn.Send, and a Receive that meets another on the same socket) recycle theirs through a free
// list, so that they allocate nothing in steady state and may run concurrently. (A sync.Pool would
// do, except that it sheds items at random under the race detector and at every GC.)
//
// The headers point only into the batch itself (I/O vectors, addresses, control buffers) and are
// rewritten whole when an entry is prepared; the I/O vectors point at the caller's buffers.
//
// On send, an entry is one datagram or a run of datagrams the kernel segments (see gso_linux.go);
// on receive, entry i reads into iovs[i].
type mmsgBatch struct {
	hdrs  [IdealBatchSize]unix.Mmsghdr
	iovs  [batchIovecs]unix.Iovec
	names [IdealBatchSize]unix.RawSockaddrInet6
	oob   [IdealBatchSize][cmsgWords]uint64
	segs  [IdealBatchSize]uint8 // datagrams in each prepared send entry
	// firstIovs is how many I/O vectors the first datagram of each send entry takes (see
	// pushDatagram), which an entry stripped back to that datagram keeps.
	firstIovs [IdealBatchSize]uint8
	niov      int    // I/O vectors the prepared send entries use
	tail      gsoRun // the last send entry, while later datagrams may join it

	// State of the call in progress, read by the pre-bound callback.
	op       uintptr // unix.SYS_SENDMMSG or unix.SYS_RECVMMSG
	first    int     // first header the next call passes
	count    int     // headers prepared
	dirtyIov int     // I/O vectors that may hold references to caller buffers
	wait     bool    // wait in the netpoller while the socket is not ready
	n        int
	errno    syscall.Errno
	calls    int // system calls the last run or runOn made, retries included
	empty    int // of them, receives that found nothing
	call     func(fd uintptr) bool
	now      func(fd uintptr) // the call for a read that must not wait (see run)
}

var batches struct {
	sync.Mutex
	free []*mmsgBatch
}

func getBatch() *mmsgBatch {
	batches.Lock()
	if n := len(batches.free); n > 0 {
		b := batches.free[n-1]
		batches.free[n-1] = nil
		batches.free = batches.free[:n-1]
		batches.Unlock()
		return b
	}
	batches.Unlock()
	return newBatch()
}

// newBatch returns an empty batch with its calls bound once, so issuing them allocates nothing.
func newBatch() *mmsgBatch {
	b := new(mmsgBatch)
	b.call = b.syscall
	b.now = func(fd uintptr) { b.syscall(fd) }
	return b
}

// putBatch releases the batch and pools it.
func putBatch(b *mmsgBatch) {
	b.release()
	batches.Lock()
	batches.free = append(batches.free, b)
	batches.Unlock()
}

// release empties the batch and drops its references to the caller's buffers, so that a batch
// kept between calls does not keep them alive.
func (b *mmsgBatch) release() {
	b.reset()
	clear(b.iovs[:b.dirtyIov])
	b.dirtyIov = 0
}

// reset empties the batch for the next call.
func (b *mmsgBatch) reset() {
	b.first, b.count, b.niov = 0, 0, 0
	b.tail = gsoRun{}
}

// syscall issues the prepared sendmmsg or recvmmsg on fd. It is a raw system call, which the Go
// scheduler does not see: gorxe's sockets are non-blocking, so the call never waits, and an
// ordinary one costs more than it saves. Entering an ordinary system call wakes the runtime's
// monitor thread whenever it slept because the process had been idle, which a responder that
// waits for every request is each time it answers one: a futex wake-up and two context switches
// on another core per call, measured at a fifth of an RDMA READ responder's CPU time.
func (b *mmsgBatch) syscall(fd uintptr) bool {
	for {
		r, _, errno := unix.RawSyscall6(b.op, fd, uintptr(unsafe.Pointer(&b.hdrs[b.first])), uintptr(b.count-b.first), 0, 0, 0)
		b.calls++
		if errno == unix.EAGAIN && b.op == unix.SYS_RECVMMSG {
			b.empty++
		}
		switch errno {
		case 0:
			b.n, b.errno = int(r), 0
			return true
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			if b.wait {
				return false
			}
		}
		b.n, b.errno = 0, errno
		return true
	}
}

// run issues the prepared call on rc. It returns the number of datagrams moved; with wait unset,
// a socket with nothing to read yields 0 and no error.
//
// A read that does not wait goes through rc.Control rather than rc.Read: Read holds the
// descriptor's read lock for as long as its caller waits in the netpoller, and a poll must not
// queue behind a goroutine that waits for the next datagram.
func (b *mmsgBatch) run(rc syscall.RawConn, op uintptr, wait bool) (int, error) {
	b.op, b.wait, b.n, b.errno, b.calls, b.empty = op, wait, 0, 0, 0, 0
	var err error
	switch {
	case op == unix.SYS_RECVMMSG && !wait:
		err = rc.Control(b.now)
		raceAcquireIO()
	case op == unix.SYS_RECVMMSG:
		err = rc.Read(b.call)
		raceAcquireIO()
	default:
		raceReleaseIO()
		err = rc.Write(b.call)
	}
	if err != nil {
		return 0, err
	}
	switch b.errno {
	case 0:
		return b.n, nil
	case unix.EAGAIN:
		return 0, nil
	}
	name := "sendmmsg"
	if op == unix.SYS_RECVMMSG {
		name = "recvmmsg"
	}
	return 0, os.NewSyscallError(name, b.errno)
}

// issued counts the system calls of b's last run or runOn.
func (c *counters) issued(b *mmsgBatch) {
	if b.op == unix.SYS_SENDMMSG {
		c.sendCalls.Add(uint64(b.calls))
		return
	}
	c.receiveCalls.Add(uint64(b.calls))
	c.emptyReceives.Add(uint64(b.empty))
}

// runOn issues the prepared recvmmsg on fd, from inside a netpoller callback that already holds
// the descriptor, without waiting: an empty socket yields 0 and no error.
func (b *mmsgBatch) runOn(fd uintptr) (int, error) {
	b.op, b.wait, b.n, b.errno, b.calls, b.empty = unix.SYS_RECVMMSG, false, 0, 0, 0, 0
	b.syscall(fd)
	switch b.errno {
	case 0:
		return b.n, nil
	case unix.EAGAIN:
		return 0, nil
	}
	return 0, os.NewSyscallError("recvmmsg", b.errno)
}

// openSend prepares the next entry to send m to dst from a socket of scope (for link-local IPv6),
// as a single datagram that joinSend may grow into a segmented send.
func (b *mmsgBatch) openSend(m *Message, dst netip.AddrPort, scope uint32) {
	i := b.count
	b.count++
	b.segs[i] = 1
	h := &b.hdrs[i].Hdr
	*h = unix.Msghdr{}
	b.hdrs[i].Len = 0
	h.Iov = &b.iovs[b.niov]
	k := b.pushDatagram(m)
	b.firstIovs[i] = uint8(k)
	h.SetIovlen(k)
	h.Name = (*byte)(unsafe.Pointer(&b.names[i]))
	h.Namelen = putSockaddr(&b.names[i], dst, scope)
	if n := b.putTrafficControl(i, dst.Addr().Is4(), m.TOS, m.TTL); n > 0 {
		h.Control = (*byte)(unsafe.Pointer(&b.oob[i][0]))
		h.SetControllen(n)
	}
}

// maxDatagramIovs is the most I/O vectors one datagram to send takes: Buf, Payload and Tail.
const maxDatagramIovs = 3

// pushDatagram points the next free I/O vectors at m's pieces and returns how many it took.
func (b *mmsgBatch) pushDatagram(m *Message) int {
	b.pushIov(m.Buf)
	if len(m.Payload) == 0 && len(m.Tail) == 0 {
		return 1
	}
	b.pushIov(m.Payload)
	b.pushIov(m.Tail)
	return maxDatagramIovs
}

// roomFor reports whether the batch has the I/O vectors for one more datagram.
func (b *mmsgBatch) roomFor() bool { return b.niov+maxDatagramIovs <= len(b.iovs) }

// pushIov points the next free I/O vector at buf.
func (b *mmsgBatch) pushIov(buf []byte) *unix.Iovec {
	v := &b.iovs[b.niov]
	b.niov++
	b.dirtyIov = max(b.dirtyIov, b.niov)
	if len(buf) > 0 {
		v.Base = &buf[0]
	} else {
		v.Base = nil
	}
	v.SetLen(len(buf))
	return v
}

// putTrafficControl writes IP_TOS/IP_TTL (or IPV6_TCLASS/IPV6_HOPLIMIT) control messages for the
// non-default values into slot i and returns their length. Per-datagram control messages, rather
// than per-socket options, keep datagrams of different classes on one socket independent.
func (b *mmsgBatch) putTrafficControl(i int, is4 bool, tos, ttl uint8) int {
	level, tosOpt, ttlOpt := unix.IPPROTO_IPV6, unix.IPV6_TCLASS, unix.IPV6_HOPLIMIT
	if is4 {
		level, tosOpt, ttlOpt = unix.IPPROTO_IP, unix.IP_TOS, unix.IP_TTL
	}
	buf := unsafe.Slice((*byte)(unsafe.Pointer(&b.oob[i][0])), cmsgWords*8)
	off := 0
	put := func(opt int, v uint8) {
		c := (*unix.Cmsghdr)(unsafe.Pointer(&buf[off]))
		c.Level = int32(level)
		c.Type = int32(opt)
		c.SetLen(unix.CmsgLen(4))
		*(*int32)(unsafe.Pointer(&buf[off+unix.CmsgLen(0)])) = int32(v)
		off += unix.CmsgSpace(4)
	}
	if tos != 0 {
		put(tosOpt, tos)
	}
	if ttl != 0 {
		put(ttlOpt, ttl)
	}
	return off
}

// newReceiveBatch returns a batch whose every slot is set up to receive, apart from the buffer:
// a socket keeps one for its reads, so that a read, which often takes one datagram or none,
// does not pay for preparing and then clearing all IdealBatchSize slots. It holds on to the
// buffers of its last read until the next.
func newReceiveBatch() *mmsgBatch {
	b := newBatch()
	for i := range b.hdrs {
		h := &b.hdrs[i].Hdr
		h.Iov = &b.iovs[i]
		h.SetIovlen(1)
		h.Name = (*byte)(unsafe.Pointer(&b.names[i]))
	}
	return b
}

// pointReceive readies slot i of a batch from newReceiveBatch to receive into buf[:cap(buf)],
// resetting what the kernel wrote in the slot's last read.
func (b *mmsgBatch) pointReceive(i int, buf []byte) {
	buf = buf[:cap(buf)]
	b.iovs[i].Base = &buf[0]
	b.iovs[i].SetLen(len(buf))
	b.hdrs[i].Len = 0
	h := &b.hdrs[i].Hdr
	h.Namelen = unix.SizeofSockaddrInet6
	h.Flags = 0
	if h.Control != nil {
		h.SetControllen(cmsgWords * 8)
	}
}

// setReceive fills slot i to receive into buf[:cap(buf)].
func (b *mmsgBatch) setReceive(i int, buf []byte) {
	b.dirtyIov = max(b.dirtyIov, i+1)
	h := &b.hdrs[i].Hdr
	*h = unix.Msghdr{}
	b.hdrs[i].Len = 0
	buf = buf[:cap(buf)]
	b.iovs[i].Base = &buf[0]
	b.iovs[i].SetLen(len(buf))
	h.Iov = &b.iovs[i]
	h.SetIovlen(1)
	h.Name = (*byte)(unsafe.Pointer(&b.names[i]))
	h.Namelen = unix.SizeofSockaddrInet6
}

// received returns slot i's datagram length, whether it was truncated, and its source.
func (b *mmsgBatch) received(i int) (n int, truncated bool, src netip.AddrPort) {
	return int(b.hdrs[i].Len), b.hdrs[i].Hdr.Flags&unix.MSG_TRUNC != 0, getSockaddr(&b.names[i])
}

// putSockaddr encodes dst into sa and returns the encoded length.
func putSockaddr(sa *unix.RawSockaddrInet6, dst netip.AddrPort, scope uint32) uint32 {
	addr := dst.Addr().Unmap()
	port := dst.Port()
	if addr.Is4() {
		sa4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		*sa4 = unix.RawSockaddrInet4{Family: unix.AF_INET, Addr: addr.As4()}
		p := (*[2]byte)(unsafe.Pointer(&sa4.Port))
		p[0], p[1] = byte(port>>8), byte(port)
		return unix.SizeofSockaddrInet4
	}
	*sa = unix.RawSockaddrInet6{Family: unix.AF_INET6, Addr: addr.As16()}
	if addr.IsLinkLocalUnicast() || addr.IsLinkLocalMulticast() {
		sa.Scope_id = scope
	}
	p := (*[2]byte)(unsafe.Pointer(&sa.Port))
	p[0], p[1] = byte(port>>8), byte(port)
	return unix.SizeofSockaddrInet6
}

// getSockaddr decodes a received source address.
func getSockaddr(sa *unix.RawSockaddrInet6) netip.AddrPort {
	switch sa.Family {
	case unix.AF_INET:
		sa4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		p := (*[2]byte)(unsafe.Pointer(&sa4.Port))
		return netip.AddrPortFrom(netip.AddrFrom4(sa4.Addr), uint16(p[0])<<8|uint16(p[1]))
	case unix.AF_INET6:
		p := (*[2]byte)(unsafe.Pointer(&sa.Port))
		return netip.AddrPortFrom(netip.AddrFrom16(sa.Addr), uint16(p[0])<<8|uint16(p[1]))
	}
	return netip.AddrPort{}
}
