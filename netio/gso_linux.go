package netio

import (
	"errors"
	"net/netip"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// UDP generic segmentation offload (GSO): one sendmmsg entry carries a run of datagrams, one I/O
// vector each, and a UDP_SEGMENT control message with their size. The kernel concatenates the
// vectors and carries the whole run through its stack as one buffer, cutting it into datagrams
// only where it must (a device without the offload, or a receiver without GRO). Most of the cost
// of a datagram is that trip, so a run of 64 costs little more than one.

const (
	// gsoMaxSegments is the longest run. Linux accepted 64 segments per send before 6.x raised
	// the limit to 128; 64 works on both and already amortises the per-send cost.
	gsoMaxSegments = 64
	// gsoMaxBytes bounds a run's UDP payload: it must fit one IP datagram (65507 bytes over IPv4,
	// 65527 over IPv6), less room for IP options or extension headers.
	gsoMaxBytes = 65000
)

// gsoRun describes the last entry of a send batch while further datagrams may join it.
type gsoRun struct {
	open     bool // the entry takes another datagram
	dst      netip.AddrPort
	tos, ttl uint8
	seg      int // segment size: the length of the run's first datagram
	bytes    int // payload so far
}

// startRun records the entry just opened for m as a run that later datagrams may join, if GSO is
// allowed for it.
func (b *mmsgBatch) startRun(m *Message, allowed bool) {
	b.tail = gsoRun{
		open: allowed && m.Len() > 0,
		dst:  m.Dst, tos: m.TOS, ttl: m.TTL,
		seg: m.Len(), bytes: m.Len(),
	}
}

// canJoin reports whether m may be the next segment of the last entry: same destination and
// traffic class, no longer than the first segment (a shorter one ends the run, as the kernel
// allows only the last segment to be short), and within the run's limits.
func (b *mmsgBatch) canJoin(m *Message) bool {
	r := &b.tail
	n := m.Len()
	return r.open && n > 0 && n <= r.seg && m.Dst == r.dst && m.TOS == r.tos && m.TTL == r.ttl &&
		int(b.segs[b.count-1]) < gsoMaxSegments && r.bytes+n <= gsoMaxBytes && b.roomFor()
}

// joinSend appends m to the last entry as its next segment; the caller checked canJoin. The
// entry gains its UDP_SEGMENT control message when its second datagram joins.
func (b *mmsgBatch) joinSend(m *Message) {
	i := b.count - 1
	h := &b.hdrs[i].Hdr
	h.SetIovlen(int(h.Iovlen) + b.pushDatagram(m))
	if b.segs[i] == 1 {
		off := int(h.Controllen)
		buf := unsafe.Slice((*byte)(unsafe.Pointer(&b.oob[i][0])), cmsgWords*8)
		c := (*unix.Cmsghdr)(unsafe.Pointer(&buf[off]))
		c.Level = unix.SOL_UDP
		c.Type = unix.UDP_SEGMENT
		c.SetLen(unix.CmsgLen(2))
		*(*uint16)(unsafe.Pointer(&buf[off+unix.CmsgLen(0)])) = uint16(b.tail.seg)
		h.Control = &buf[0]
		h.SetControllen(off + unix.CmsgSpace(2))
	}
	b.segs[i]++
	b.tail.bytes += m.Len()
	if m.Len() < b.tail.seg {
		b.tail.open = false
	}
}

// unsegment strips entry e back to its first datagram, without UDP_SEGMENT.
func (b *mmsgBatch) unsegment(e int) {
	h := &b.hdrs[e].Hdr
	h.SetIovlen(int(b.firstIovs[e]))
	h.SetControllen(int(h.Controllen) - unix.CmsgSpace(2))
	if h.Controllen == 0 {
		h.Control = nil
	}
	b.hdrs[e].Len = 0
}

// gsoFallback handles a segmented send, entry b.first holding msgs[*done:], refused with err, an
// errno that may mean the kernel cannot segment at all but may as well be the datagrams' own (a
// route refusing the source, say). The run's first datagram is sent on its own to tell which: if
// it goes, segmentation was the trouble, so the socket stops using it and Send prepares the rest
// again (errGSORefused); if it fails too, the error is returned as for any datagram.
func (c *UDPConn) gsoFallback(b *mmsgBatch, s *udpSocket, msgs []Message, done *int, err error) error {
	e, first := b.first, *done
	b.unsegment(e)
	count := b.count
	b.count = e + 1
	n, perr := b.run(s.rc, unix.SYS_SENDMMSG, true)
	c.counters.issued(b)
	b.count = count
	if n == 1 {
		c.counters.sent(1, msgs[first].Len())
		*done++
		if s.gso.Swap(false) {
			c.counters.gsoFallbacks.Add(1)
		}
		c.renumber(b, s, msgs, first) // entry e's datagrams after the first, then later entries
		return errGSORefused
	}
	c.counters.drop(DropSendError)
	c.renumber(b, s, msgs, first)
	if perr != nil {
		return perr
	}
	return err
}

// errGSORefused tells Send that the kernel refused a segmented send, GSO is now off on the
// socket, and the messages from the count sent so far on must be prepared again.
var errGSORefused = errors.New("segmentation offload refused")

// gsoRefused reports whether err is how Linux refuses a segmented send it cannot do at all
// (rather than a datagram that would fail on its own too, such as EMSGSIZE): EIO for a route
// or device without checksum offload, EINVAL for a socket that sends zero checksums or a run
// beyond the kernel's segment limit, EOPNOTSUPP or ENOPROTOOPT for a kernel without UDP_SEGMENT.
func gsoRefused(err error) bool {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return false
	}
	switch errno {
	case unix.EIO, unix.EINVAL, unix.EOPNOTSUPP, unix.ENOPROTOOPT:
		return true
	}
	return false
}

// gsoAllowed reports whether datagrams from s may be coalesced.
func (c *UDPConn) gsoAllowed(s *udpSocket) bool {
	return s.gso.Load() && (!s.local.Addr().Is4() || c.cfg.SetIPv4ID != nil)
}

// renumber gives every datagram of the unsent entries that was told a non-zero IPv4 ID the ID it
// now leaves with, 0, as the entries will go out as single datagrams. msgs[first] is the first
// datagram of entry b.first.
func (c *UDPConn) renumber(b *mmsgBatch, s *udpSocket, msgs []Message, first int) {
	if !s.local.Addr().Is4() || c.cfg.SetIPv4ID == nil {
		return
	}
	for e := b.first; e < b.count; e++ {
		segs := int(b.segs[e])
		for k := 1; k < segs; k++ {
			c.cfg.SetIPv4ID(&msgs[first+k], uint16(k), 0)
		}
		first += segs
	}
}
