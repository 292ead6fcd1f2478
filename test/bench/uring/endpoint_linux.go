//go:build linux

package main

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A ringMode is a set of io_uring setup flags, which decide when the completions of a multishot
// receive become visible: they are posted by task work queued to the thread that armed it.
type ringMode struct {
	Name  string
	flags uint32
}

var ringModes = []ringMode{
	{"default", 0},
	{"single-issuer", setupSingleIssuer},
	{"coop", setupCoopTaskrun},
	{"coop+flag", setupCoopTaskrun | setupTaskrunFlag},
	{"defer", setupSingleIssuer | setupDeferTaskrun},
	{"defer+flag", setupSingleIssuer | setupDeferTaskrun | setupTaskrunFlag},
}

func lookupMode(name string) (ringMode, error) {
	for _, m := range ringModes {
		if m.Name == name {
			return m, nil
		}
	}
	return ringMode{}, fmt.Errorf("unknown ring mode %q", name)
}

// deferred reports whether task work waits for the thread to enter the kernel on its own
// (COOP_TASKRUN: no interrupt of a thread running in user space; DEFER_TASKRUN: only
// io_uring_enter with GETEVENTS runs it).
func (m ringMode) deferred() bool { return m.flags&(setupCoopTaskrun|setupDeferTaskrun) != 0 }

// hinted reports whether the kernel flags pending task work in the SQ ring's flags.
func (m ringMode) hinted() bool { return m.flags&setupTaskrunFlag != 0 }

const (
	recvTag = 1 // user_data of the multishot receive
	sendTag = 2 // user_data of sends, whose successful completions are skipped
)

// uringRx is a socket read by one multishot receive into a provided-buffer ring.
type uringRx struct {
	r      *ring
	mode   ringMode
	br     *bufRing
	fd     int
	hdr    *msghdr // nil: IORING_OP_RECV
	rearms uint64  // multishot receives that ended (out of buffers) and were armed again
}

// newUringRx arms a multishot receive on fd: RECVMSG with control space when ctl, else RECV.
func newUringRx(r *ring, mode ringMode, fd int, a *arena, ctl bool, count, size int) (*uringRx, error) {
	br, err := r.registerBufRing(1, count, size)
	if err != nil {
		return nil, err
	}
	x := &uringRx{r: r, mode: mode, br: br, fd: fd}
	if ctl {
		x.hdr = &arenaSlice[msghdr](a, 1)[0]
		x.hdr.controllen = cmsgSpace
	}
	if err := x.arm(); err != nil {
		return nil, err
	}
	return x, nil
}

func (x *uringRx) arm() error {
	if err := x.r.armRecv(x.fd, x.br.group, x.hdr, recvTag); err != nil {
		return err
	}
	_, err := x.r.submit(0, 0)
	return err
}

// reap consumes the completions already posted, handing each datagram's payload (and GRO
// segment size, 0 for none) to fn; it makes no system call unless the receive must be armed again.
func (x *uringRx) reap(fn func(payload []byte, seg int)) (int, error) {
	got := 0
	for {
		c, ok := x.r.peek()
		if !ok {
			return got, nil
		}
		ud, res, flags := c.userData, c.res, c.flags
		x.r.advance()
		if ud == sendTag {
			if res < 0 {
				return got, fmt.Errorf("send: %w", unix.Errno(-res))
			}
			continue
		}
		if flags&cqeFBuffer != 0 {
			id := uint16(flags >> cqeBufferShift)
			if res > 0 {
				buf := x.br.buf(id)
				if x.hdr == nil {
					fn(buf[:res], 0)
				} else {
					ctl, payload, err := parseRecvmsg(buf, int(res), x.hdr)
					if err != nil {
						return got, err
					}
					fn(payload, groSegment(ctl))
				}
				got++
			}
			x.br.recycle(id)
		}
		if flags&cqeFMore == 0 {
			if res < 0 && res != -int32(unix.ENOBUFS) {
				return got, fmt.Errorf("multishot receive: %w", unix.Errno(-res))
			}
			x.rearms++
			if err := x.arm(); err != nil {
				return got, err
			}
		}
	}
}

// poll is one busy-poll step: what reap finds, and if nothing, an io_uring_enter where the mode
// needs one to post completions (always for deferred task work without the hint, only when the
// hint is up with it).
func (x *uringRx) poll(fn func(payload []byte, seg int)) (int, error) {
	n, err := x.reap(fn)
	if n > 0 || err != nil || !x.mode.deferred() {
		return n, err
	}
	if x.mode.hinted() && !x.r.taskrunPending() {
		return 0, nil
	}
	if err := x.r.getEvents(); err != nil {
		return 0, err
	}
	return x.reap(fn)
}

// queueSend queues an IORING_OP_SEND of b on the connected socket fd.
func (r *ring) queueSend(fd int, b []byte) error {
	e, err := r.sqe()
	if err != nil {
		return err
	}
	e.opcode = opSend
	e.fd = int32(fd)
	e.addr = addrOf(b)
	e.len = uint32(len(b))
	e.flags = sqeCQESkipSuccess
	e.userData = sendTag
	return nil
}

// queueSendmsg queues an IORING_OP_SENDMSG of hdr on fd.
func (r *ring) queueSendmsg(fd int, hdr *msghdr) error {
	e, err := r.sqe()
	if err != nil {
		return err
	}
	e.opcode = opSendmsg
	e.fd = int32(fd)
	e.addr = uint64(uintptr(unsafe.Pointer(hdr)))
	e.len = 1
	e.flags = sqeCQESkipSuccess
	e.userData = sendTag
	return nil
}

// flushSends submits the queued sends in one io_uring_enter, which also runs deferred task work.
// A failed send posts a completion (successful ones post none): reap reports it on a ring that
// also receives, sendFailures on one that only sends.
func (r *ring) flushSends() error {
	_, err := r.submit(0, enterGetEvents)
	return err
}

// sendFailures consumes the completions of a ring that only sends and counts the failed sends.
func (r *ring) sendFailures() int {
	failed := 0
	for {
		c, ok := r.peek()
		if !ok {
			return failed
		}
		if c.res < 0 {
			failed++
		}
		r.advance()
	}
}
