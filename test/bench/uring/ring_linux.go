//go:build linux

package main

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The io_uring ABI as far as this program uses it (include/uapi/linux/io_uring.h); x/sys/unix
// has the system call numbers but none of the structures or flags.
const (
	setupCoopTaskrun  = 1 << 8
	setupTaskrunFlag  = 1 << 9
	setupSingleIssuer = 1 << 12
	setupDeferTaskrun = 1 << 13
	setupCQSize       = 1 << 3

	featSingleMmap = 1 << 0

	offSQRing = 0
	offSQEs   = 0x10000000

	enterGetEvents = 1 << 0
	enterExtArg    = 1 << 3

	sqFlagTaskrun = 1 << 2 // sq_flags: task work is pending (IORING_SQ_TASKRUN)

	opSendmsg = 9
	opRecvmsg = 10
	opSend    = 26
	opRecv    = 27

	sqeBufferSelect   = 1 << 5
	sqeCQESkipSuccess = 1 << 6

	recvMultishot = 1 << 1 // in sqe.ioprio

	cqeFBuffer     = 1 << 0
	cqeFMore       = 1 << 1
	cqeBufferShift = 16

	registerPbufRing = 22
)

// sqe is struct io_uring_sqe.
type sqe struct {
	opcode   uint8
	flags    uint8
	ioprio   uint16
	fd       int32
	off      uint64
	addr     uint64
	len      uint32
	opFlags  uint32 // msg_flags for the socket operations
	userData uint64
	bufGroup uint16
	_        uint16
	_        int32
	_        [2]uint64
}

// cqe is struct io_uring_cqe.
type cqe struct {
	userData uint64
	res      int32
	flags    uint32
}

type sqringOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, _ uint32
	_                                                           uint64
}

type cqringOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, _ uint32
	_                                                           uint64
}

// params is struct io_uring_params.
type params struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFd uint32
	_                                                                      [3]uint32
	sqOff                                                                  sqringOffsets
	cqOff                                                                  cqringOffsets
}

// getEventsArg is struct io_uring_getevents_arg, for a wait with a timeout.
type getEventsArg struct {
	sigmask   uint64
	sigmaskSz uint32
	_         uint32
	ts        uint64
}

// ring is one io_uring instance with its rings mapped. Only the thread that owns it may use it:
// the counters and the local tails are not synchronised.
type ring struct {
	fd        int
	flags     uint32
	mem, sqem []byte
	sqHead    *uint32
	sqTail    *uint32
	sqFlags   *uint32
	sqMask    uint32
	sqEntries uint32
	sqes      []sqe
	cqHead    *uint32
	cqTail    *uint32
	cqMask    uint32
	cqes      []cqe
	tail      uint32 // SQEs filled, published to sqTail by submit
	pending   uint32 // SQEs published but not yet passed to io_uring_enter
	enters    uint64 // io_uring_enter calls made
}

// errRefused wraps the reason io_uring cannot be used at all here.
var errRefused = errors.New("io_uring refused")

// newRing sets up a ring of entries SQEs and cqEntries CQEs with the given setup flags.
func newRing(entries, cqEntries, flags uint32) (*ring, error) {
	p := params{flags: flags | setupCQSize, cqEntries: cqEntries}
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	if errno != 0 {
		if errno == unix.ENOSYS || errno == unix.EPERM || errno == unix.EACCES {
			return nil, fmt.Errorf("%w: io_uring_setup: %v", errRefused, errno)
		}
		if errno == unix.EINVAL {
			// A setup flag this kernel does not know.
			return nil, fmt.Errorf("%w: io_uring_setup(flags %#x): %v", errRefused, flags, errno)
		}
		return nil, fmt.Errorf("io_uring_setup(flags %#x): %w", flags, errno)
	}
	r := &ring{fd: int(fd), flags: flags}
	if p.features&featSingleMmap == 0 {
		r.close()
		return nil, fmt.Errorf("%w: kernel maps SQ and CQ rings separately (before 5.4)", errRefused)
	}
	size := max(p.sqOff.array+p.sqEntries*4, p.cqOff.cqes+p.cqEntries*uint32(unsafe.Sizeof(cqe{})))
	var err error
	r.mem, err = unix.Mmap(r.fd, offSQRing, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		r.close()
		return nil, fmt.Errorf("mmap rings: %w", err)
	}
	r.sqem, err = unix.Mmap(r.fd, offSQEs, int(p.sqEntries)*int(unsafe.Sizeof(sqe{})), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		r.close()
		return nil, fmt.Errorf("mmap SQEs: %w", err)
	}
	r.sqHead = r.u32(p.sqOff.head)
	r.sqTail = r.u32(p.sqOff.tail)
	r.sqFlags = r.u32(p.sqOff.flags)
	r.sqMask = *r.u32(p.sqOff.ringMask)
	r.sqEntries = p.sqEntries
	r.cqHead = r.u32(p.cqOff.head)
	r.cqTail = r.u32(p.cqOff.tail)
	r.cqMask = *r.u32(p.cqOff.ringMask)
	r.sqes = unsafe.Slice((*sqe)(unsafe.Pointer(&r.sqem[0])), p.sqEntries)
	r.cqes = unsafe.Slice((*cqe)(unsafe.Pointer(&r.mem[p.cqOff.cqes])), p.cqEntries)
	// The SQ array maps ring slots to SQEs; slot i always holds SQE i.
	array := unsafe.Slice(r.u32(p.sqOff.array), p.sqEntries)
	for i := range array {
		array[i] = uint32(i)
	}
	r.tail = *r.sqTail
	return r, nil
}

func (r *ring) u32(off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&r.mem[off])) }

func (r *ring) close() {
	if r.sqem != nil {
		_ = unix.Munmap(r.sqem)
	}
	if r.mem != nil {
		_ = unix.Munmap(r.mem)
	}
	_ = unix.Close(r.fd)
}

// sqe returns a zeroed SQE to fill, submitting what is queued first if the ring is full.
func (r *ring) sqe() (*sqe, error) {
	if r.tail-atomic.LoadUint32(r.sqHead) >= r.sqEntries {
		if _, err := r.submit(0, 0); err != nil {
			return nil, err
		}
	}
	e := &r.sqes[r.tail&r.sqMask]
	*e = sqe{}
	r.tail++
	return e, nil
}

// submit passes the filled SQEs to the kernel in one io_uring_enter, waiting for wait
// completions; flags are added to GETEVENTS when wait > 0.
func (r *ring) submit(wait, flags uint32) (int, error) {
	atomic.StoreUint32(r.sqTail, r.tail)
	n := r.tail - r.pending
	r.pending = r.tail
	if wait > 0 {
		flags |= enterGetEvents
	}
	return r.enter(n, wait, flags, nil)
}

// enter is io_uring_enter. A call that may sleep goes through the scheduler; the others are raw.
func (r *ring) enter(toSubmit, wait, flags uint32, arg *getEventsArg) (int, error) {
	for {
		r.enters++
		var n uintptr
		var errno unix.Errno
		argp, argsz := uintptr(0), uintptr(0)
		if arg != nil {
			argp, argsz = uintptr(unsafe.Pointer(arg)), unsafe.Sizeof(*arg)
			flags |= enterExtArg
		}
		if wait > 0 {
			n, _, errno = unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(toSubmit), uintptr(wait), uintptr(flags), argp, argsz)
		} else {
			n, _, errno = unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(toSubmit), 0, uintptr(flags), argp, argsz)
		}
		switch errno {
		case 0:
			return int(n), nil
		case unix.EINTR:
			continue
		}
		return 0, fmt.Errorf("io_uring_enter: %w", errno)
	}
}

// getEvents runs pending task work and posts its completions without submitting anything.
func (r *ring) getEvents() error {
	_, err := r.enter(0, 0, enterGetEvents, nil)
	return err
}

// waitCQE blocks until a completion is there or timeoutNS has passed (ETIME).
func (r *ring) waitCQE(timeoutNS int64) error {
	if r.ready() > 0 {
		return nil
	}
	ts := unix.NsecToTimespec(timeoutNS)
	arg := getEventsArg{ts: uint64(uintptr(unsafe.Pointer(&ts)))}
	atomic.StoreUint32(r.sqTail, r.tail)
	n := r.tail - r.pending
	r.pending = r.tail
	_, err := r.enter(n, 1, enterGetEvents, &arg)
	return err
}

// ready is the number of completions posted and not yet consumed; it makes no system call.
func (r *ring) ready() uint32 { return atomic.LoadUint32(r.cqTail) - *r.cqHead }

// taskrunPending reports the kernel's IORING_SQ_TASKRUN hint (rings set up with TASKRUN_FLAG):
// task work waits that an io_uring_enter would run.
func (r *ring) taskrunPending() bool { return atomic.LoadUint32(r.sqFlags)&sqFlagTaskrun != 0 }

// peek returns the oldest unconsumed completion.
func (r *ring) peek() (*cqe, bool) {
	h := *r.cqHead
	if atomic.LoadUint32(r.cqTail) == h {
		return nil, false
	}
	return &r.cqes[h&r.cqMask], true
}

// advance consumes the completion peek returned.
func (r *ring) advance() { atomic.StoreUint32(r.cqHead, *r.cqHead+1) }

// bufRing is a provided-buffer ring (IORING_REGISTER_PBUF_RING): buffers the kernel picks for
// multishot receives, each handed back by the program once it has read it.
type bufRing struct {
	entries []bufEntry // the ring shared with the kernel
	data    []byte     // count buffers of size bytes
	size    int
	mask    uint16
	tail    uint16
	group   uint16
}

// bufEntry is struct io_uring_buf. The ring's tail overlays the last 16 bits of entry 0.
type bufEntry struct {
	addr uint64
	len  uint32
	bid  uint16
	_    uint16
}

type bufReg struct {
	ringAddr    uint64
	ringEntries uint32
	bgid        uint16
	flags       uint16
	_           [3]uint64
}

// registerBufRing registers count (a power of two) buffers of size bytes as group.
func (r *ring) registerBufRing(group uint16, count, size int) (*bufRing, error) {
	mem, err := mmapAnon(count * int(unsafe.Sizeof(bufEntry{})))
	if err != nil {
		return nil, err
	}
	data, err := mmapAnon(count * size)
	if err != nil {
		_ = unix.Munmap(mem)
		return nil, err
	}
	b := &bufRing{
		entries: unsafe.Slice((*bufEntry)(unsafe.Pointer(&mem[0])), count),
		data:    data, size: size, mask: uint16(count - 1), group: group,
	}
	reg := bufReg{ringAddr: addrOf(mem), ringEntries: uint32(count), bgid: group}
	_, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), registerPbufRing, uintptr(unsafe.Pointer(&reg)), 1, 0, 0)
	if errno != 0 {
		_ = unix.Munmap(mem)
		_ = unix.Munmap(data)
		if errno == unix.EINVAL {
			return nil, fmt.Errorf("%w: IORING_REGISTER_PBUF_RING: %v", errRefused, errno)
		}
		return nil, fmt.Errorf("IORING_REGISTER_PBUF_RING: %w", errno)
	}
	for i := range count {
		b.recycle(uint16(i))
	}
	return b, nil
}

// buf returns buffer id's bytes.
func (b *bufRing) buf(id uint16) []byte {
	return b.data[int(id)*b.size : (int(id)+1)*b.size]
}

// recycle hands buffer id back to the kernel.
func (b *bufRing) recycle(id uint16) {
	e := &b.entries[b.tail&b.mask]
	e.addr = addrOf(b.buf(id))
	e.len = uint32(b.size)
	e.bid = id
	b.tail++
	// The tail is a 16-bit field and sync/atomic has no 16-bit store: store the 32-bit word it
	// shares with entry 0's bid (little-endian: bid low, tail high), which only this side writes.
	w := (*uint32)(unsafe.Pointer(&b.entries[0].bid))
	atomic.StoreUint32(w, uint32(b.entries[0].bid)|uint32(b.tail)<<16)
}

// armRecv queues a multishot receive on fd into group's buffers: IORING_OP_RECV (payload
// only), or IORING_OP_RECVMSG with hdr shaping the name and control space before each payload.
func (r *ring) armRecv(fd int, group uint16, hdr *msghdr, userData uint64) error {
	e, err := r.sqe()
	if err != nil {
		return err
	}
	e.opcode = opRecv
	if hdr != nil {
		e.opcode = opRecvmsg
		e.addr = uint64(uintptr(unsafe.Pointer(hdr)))
		e.len = 1
	}
	e.fd = int32(fd)
	e.flags = sqeBufferSelect
	e.ioprio = recvMultishot
	e.bufGroup = group
	e.userData = userData
	return nil
}

// recvmsgOut is struct io_uring_recvmsg_out, which heads each buffer of a multishot RECVMSG;
// the name, the control messages and the payload follow it in the space the msghdr reserved.
type recvmsgOut struct {
	namelen, controllen, payloadlen, flags uint32
}

// parseRecvmsg splits a multishot RECVMSG buffer of n bytes into control messages and payload.
func parseRecvmsg(buf []byte, n int, hdr *msghdr) (control, payload []byte, err error) {
	const h = int(unsafe.Sizeof(recvmsgOut{}))
	nameSpace, ctlSpace := int(hdr.namelen), int(hdr.controllen)
	if n < h+nameSpace+ctlSpace || n > len(buf) {
		return nil, nil, fmt.Errorf("recvmsg buffer of %d bytes too short for its header", n)
	}
	out := (*recvmsgOut)(unsafe.Pointer(&buf[0]))
	ctl := buf[h+nameSpace : h+nameSpace+int(min(out.controllen, uint32(ctlSpace)))]
	p := h + nameSpace + ctlSpace
	if p+int(out.payloadlen) > n {
		// The payload was truncated to the buffer (MSG_TRUNC in flags).
		return ctl, buf[p:n], nil
	}
	return ctl, buf[p : p+int(out.payloadlen)], nil
}
