package netio

import (
	"errors"
	"net"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// UDP generic receive offload (GRO): with UDP_GRO on, the kernel may hand a socket one buffer
// holding consecutive datagrams of one flow, all of the size its UDP_GRO control message gives
// except perhaps the last. A segmented send over loopback arrives this way without ever being cut
// up, which is where most of GSO's gain on one host comes from.

// groSlotSize is the buffer of one read slot: the largest coalesced buffer the kernel delivers.
const groSlotSize = 1 << 16

// groReader is how a listening socket with GRO on reads. A caller that offers buffers of
// CoalesceBufSize gets each coalesced run whole, read straight into its buffer. For smaller
// buffers the socket reads into 64 KiB slots of its own and copies each datagram into a caller's
// buffer, keeping Receive's one-datagram-per-message contract for them; datagrams the caller had
// no room for stay here for the next Receive, which hands them out without a system call.
// Guarded by the socket's rxMu.
type groReader struct {
	b     *mmsgBatch
	slots int    // slots of mem
	mem   []byte // slots of groSlotSize bytes, allocated when first read into
	got   int    // slots the last read into mem filled
	slot  int    // slot of the next datagram to hand out
	off   int    // its offset in the slot
	seg   int    // segment size of the slot: its datagrams' size, the last may be shorter
}

func newGROReader(slots int) *groReader {
	r := &groReader{b: newReceiveBatch(), slots: min(max(slots, 1), IdealBatchSize)}
	for i := range r.b.hdrs {
		r.b.hdrs[i].Hdr.Control = (*byte)(unsafe.Pointer(&r.b.oob[i][0]))
	}
	return r
}

// wholeRuns returns how many of msgs, from the first, can take a coalesced run each.
func wholeRuns(msgs []Message) int {
	n := 0
	for n < len(msgs) && n < IdealBatchSize && cap(msgs[n].Buf) >= CoalesceBufSize {
		n++
	}
	return n
}

// receiveGRO hands out the datagrams left from the last read or, when there are none, reads.
// It may return 0 when every datagram read was dropped as truncated, and without wait when
// nothing has arrived.
//
// The reader's lock (rxMu) is held only while reading and handing out, never while waiting for
// the socket: a waiting Receive must not keep TryReceive from the datagrams already there. So a
// waiting read runs inside the netpoller's callback, which takes the lock for each attempt.
func (c *UDPConn) receiveGRO(s *udpSocket, msgs []Message, wait bool) (int, error) {
	if !wait {
		s.rxMu.Lock()
		defer s.rxMu.Unlock()
		return c.fillGRO(s, msgs, noFD)
	}
	// Waiting readers take turns, as they did on rxMu before; the netpoller's read lock would
	// serialise them anyway.
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	w := &s.waiting
	*w = groWait{c: c, msgs: msgs}
	err := s.rc.Read(s.groReady)
	raceAcquireIO()
	n, ferr := w.n, w.err
	*w = groWait{}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return 0, err // a join woke the wait to switch to polling (see kickListener)
	}
	if err != nil {
		return 0, net.ErrClosed
	}
	return n, ferr
}

// groWait is the state of a waiting GRO read, handed to the netpoller's callback.
type groWait struct {
	c    *UDPConn
	msgs []Message
	n    int
	err  error
}

// groReady is the netpoller callback of a waiting GRO read: it reports whether the read is over
// (datagrams, truncated ones only, or an error) or must wait for the socket.
func (s *udpSocket) groReadyCall(fd uintptr) bool {
	w := &s.waiting
	s.rxMu.Lock()
	w.n, w.err = w.c.fillGRO(s, w.msgs, fd)
	// A conn closed before its first read returns ErrClosed without ever building the reader.
	empty := s.gror == nil || s.gror.got == 0
	s.rxMu.Unlock()
	return w.n > 0 || w.err != nil || !empty
}

// noFD tells fillGRO that it is not inside a netpoller callback and must reach the socket itself.
const noFD = ^uintptr(0)

// fillGRO hands out what the last read left or reads without waiting, on fd when called from
// the netpoller with one, and returns how many messages it filled. The caller holds s.rxMu.
func (c *UDPConn) fillGRO(s *udpSocket, msgs []Message, fd uintptr) (int, error) {
	if c.closed.Load() {
		return 0, net.ErrClosed // datagrams still waiting here go with the socket
	}
	if s.gror == nil {
		s.gror = newGROReader(c.cfg.GROSlots)
	}
	r := s.gror
	if r.slot < r.got {
		return c.handOut(s, r, msgs), nil
	}
	whole := wholeRuns(msgs)
	if whole > 0 {
		r.b.count = whole
		for i := range whole {
			r.b.pointReceive(i, msgs[i].Buf)
		}
	} else {
		if r.mem == nil {
			r.mem = make([]byte, r.slots*groSlotSize)
		}
		r.b.count = r.slots
		for i := range r.slots {
			r.b.pointReceive(i, r.mem[i*groSlotSize:(i+1)*groSlotSize])
		}
	}
	var got int
	var err error
	if fd == noFD {
		got, err = r.b.run(s.rc, unix.SYS_RECVMMSG, false)
	} else {
		got, err = r.b.runOn(fd)
	}
	c.counters.issued(r.b)
	r.got, r.slot, r.off = 0, 0, 0
	if err != nil {
		if errors.Is(err, net.ErrClosed) || c.closed.Load() {
			return 0, net.ErrClosed
		}
		return 0, err
	}
	for i := range got {
		size := int(r.b.hdrs[i].Len)
		if seg := r.b.groSegment(i); seg > 0 && seg < size {
			c.counters.groRead((size + seg - 1) / seg)
		}
	}
	if whole > 0 {
		return c.filled(s, r.b, msgs, got), nil
	}
	r.got = got
	return c.handOut(s, r, msgs), nil
}

// handOut copies the next datagrams of r into msgs, one per message, and returns how many.
func (c *UDPConn) handOut(s *udpSocket, r *groReader, msgs []Message) int {
	n, bytes := 0, 0
	for n < len(msgs) && r.slot < r.got {
		slot := r.slot
		h := &r.b.hdrs[slot]
		size := int(h.Len)
		if r.off == 0 {
			if h.Hdr.Flags&unix.MSG_TRUNC != 0 {
				// Cannot happen with 64 KiB slots; if it did, the segment boundaries are lost.
				c.counters.drop(DropTruncated)
				r.slot++
				continue
			}
			r.seg = r.b.groSegment(slot)
			if r.seg <= 0 || r.seg > size {
				r.seg = size // a single datagram, or a size that makes no sense: take it whole
			}
		}
		data := r.mem[slot*groSlotSize : slot*groSlotSize+size]
		dg := data[r.off:min(r.off+r.seg, size)]
		coalesced := r.seg < size
		r.off += len(dg)
		if r.off >= size {
			r.slot, r.off = r.slot+1, 0
		}
		m := &msgs[n]
		if len(dg) > cap(m.Buf) {
			c.counters.drop(DropTruncated)
			continue
		}
		m.Buf = m.Buf[:len(dg)]
		copy(m.Buf, dg)
		m.Src, m.Dst = s.source(getSockaddr(&r.b.names[slot])), s.local
		m.TOS, m.TTL, m.SegmentSize = 0, 0, 0
		if coalesced {
			m.SegmentSize = uint16(r.seg)
		}
		bytes += len(dg)
		n++
	}
	c.counters.received(n, bytes)
	return n
}

// groSegment returns the segment size slot i's UDP_GRO control message reports, or 0 if it has
// none (the slot holds one datagram).
func (b *mmsgBatch) groSegment(i int) int {
	h := &b.hdrs[i].Hdr
	buf := unsafe.Slice((*byte)(unsafe.Pointer(&b.oob[i][0])), cmsgWords*8)
	buf = buf[:min(int(h.Controllen), len(buf))]
	for len(buf) >= unix.SizeofCmsghdr {
		cm := (*unix.Cmsghdr)(unsafe.Pointer(&buf[0]))
		l := int(cm.Len)
		if l < unix.SizeofCmsghdr || l > len(buf) {
			return 0
		}
		if cm.Level == unix.SOL_UDP && cm.Type == unix.UDP_GRO && l >= unix.CmsgLen(4) {
			return int(*(*int32)(unsafe.Pointer(&buf[unix.CmsgLen(0)])))
		}
		buf = buf[min(unix.CmsgSpace(l-unix.CmsgLen(0)), len(buf)):]
	}
	return 0
}
