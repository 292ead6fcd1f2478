package netio

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// UDPConn is the real UDP backend: one unconnected listening socket per local address, plus
// source-port sockets created on demand (see the package documentation). Linux only.
type UDPConn struct {
	cfg       UDPConfig
	locals    []netip.AddrPort
	listeners []*udpSocket
	// poll waits on all readable sockets when there is more than one: several listeners, or
	// sockets of joined multicast groups. Set at most once, by ListenUDP or the first join.
	poll atomic.Pointer[poller]
	// readable is what a polling Receive reads: the listeners, then the group sockets.
	readable atomic.Pointer[[]*udpSocket]
	ifindex  map[netip.Addr]int // interface index of each local address (0 when unknown)

	gmu    sync.Mutex // guards groups and the changes of readable and poll
	groups map[netip.Addr]*groupSocket

	// senders holds the source-port sockets opened so far. Send reads it without a lock; it is
	// replaced, never changed, under mu, so the table every send looks its socket up in is a
	// cache line nobody writes.
	senders   atomic.Pointer[map[netip.AddrPort]*udpSocket]
	mu        sync.Mutex // guards the replacement of senders, and dropsKept
	dropsKept bool       // Close moved the listeners' kernel drop counts into counters

	closed   atomic.Bool
	next     atomic.Uint32 // where a multi-socket Receive starts looking, for fairness
	counters counters
}

var (
	_ Conn         = (*UDPConn)(nil)
	_ senderSource = (*UDPConn)(nil)
)

// udpSocket is one bound, unconnected UDP socket.
type udpSocket struct {
	conn  *net.UDPConn
	rc    syscall.RawConn
	local netip.AddrPort
	scope uint32 // IPv6 interface index of local, for link-local destinations

	// gso is whether Send may coalesce datagrams from this socket; it turns off for good
	// when the kernel refuses a segmented send.
	gso atomic.Bool
	// gro is whether UDP_GRO is on, which makes Receive read through gror.
	gro bool
	// group is whether this is the socket of a joined multicast group (see JoinGroup).
	group bool

	// rxb is the receive scratch of a listener, kept prepared between calls so that a read
	// only points each slot at its buffer (see recvBatch). Guarded by rxMu; a concurrent
	// Receive on the same socket uses a pooled batch instead. With GRO on, gror takes its
	// place, and concurrent Receives on the socket take turns.
	rxMu sync.Mutex
	rxb  *mmsgBatch
	gror *groReader

	// waitMu admits one waiting GRO read or WaitReadable at a time; waiting and looked are
	// their state, and groReady and readyLook their callbacks, bound once so that waiting
	// allocates nothing.
	waitMu    sync.Mutex
	waiting   groWait
	groReady  func(fd uintptr) bool
	looked    bool
	readyLook func(fd uintptr) bool
}

// ListenUDP binds cfg.Port on each of cfg.Addrs.
func ListenUDP(cfg UDPConfig) (*UDPConn, error) {
	cfg = cfg.withDefaults()
	locals, err := localAddrPorts(cfg.Port, cfg.Addrs)
	if err != nil {
		return nil, err
	}
	c := &UDPConn{cfg: cfg, locals: locals, ifindex: interfaceIndexes(locals), groups: make(map[netip.Addr]*groupSocket)}
	c.senders.Store(new(map[netip.AddrPort]*udpSocket{}))
	for _, l := range locals {
		s, err := openSocket(l, true, &c.cfg, c.ifindex[l.Addr()])
		if err != nil {
			c.Close()
			return nil, err
		}
		if !cfg.DisableGRO {
			// A kernel without UDP_GRO (before 5.0) refuses it; reads then take one datagram
			// per slot, which is also all such a kernel would deliver.
			if enableGRO(s.rc) == nil {
				s.gro = true
			} else {
				c.counters.groFallbacks.Add(1)
			}
		}
		c.listeners = append(c.listeners, s)
	}
	socks := slices.Clone(c.listeners)
	c.readable.Store(&socks)
	if len(c.listeners) > 1 {
		p, err := newPoller(c.listeners)
		if err != nil {
			c.Close()
			return nil, err
		}
		c.poll.Store(p)
	}
	return c, nil
}

// openSocket binds an unconnected UDP socket to local with the RoCE socket options.
// ifindex, when known, is the interface multicast leaves from.
func openSocket(local netip.AddrPort, listener bool, cfg *UDPConfig, ifindex int) (*udpSocket, error) {
	is6 := !local.Addr().Is4()
	network := "udp4"
	if is6 {
		network = "udp6"
	}
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		return setSocketOptions(rc, is6, listener, cfg)
	}}
	pc, err := lc.ListenPacket(context.Background(), network, local.String())
	if err != nil {
		return nil, err
	}
	conn := pc.(*net.UDPConn)
	rc, err := conn.SyscallConn()
	if err != nil {
		conn.Close()
		return nil, err
	}
	s := &udpSocket{conn: conn, rc: rc, local: local}
	s.groReady = s.groReadyCall
	s.readyLook = s.readyLookCall
	s.gso.Store(!cfg.DisableGSO)
	if z := local.Addr().Zone(); z != "" {
		if ifi, err := net.InterfaceByName(z); err == nil {
			s.scope = uint32(ifi.Index)
		}
	}
	if err := setMulticastInterface(rc, local.Addr(), ifindex); err != nil {
		conn.Close()
		return nil, err
	}
	return s, nil
}

// Send implements [Conn]. Consecutive messages leaving the same socket go out in one sendmmsg, so
// callers get the most from a batch by grouping messages by Src.
//
// Unless GSO is off, a run of consecutive messages from the same socket to the same destination
// with the same TOS and TTL and the same length (the last of a run may be shorter) goes out as one
// segmented send of up to 64 datagrams and 65000 bytes; the kernel cuts it into the same
// datagrams that separate sends would produce, apart from the IPv4 Identification (see
// [UDPConfig.SetIPv4ID]). If the kernel refuses a segmented send, the socket stops using GSO and
// the run is sent again as single datagrams, so nothing is lost.
func (c *UDPConn) Send(msgs []Message) (int, error) {
	b := getBatch()
	n, err := c.send(b, msgs)
	putBatch(b)
	return n, err
}

// SendsVectors implements [VectorSender]: Send takes datagrams in pieces (Message.Payload).
func (c *UDPConn) SendsVectors() bool { return true }

// NewSender returns a Sender with a sendmmsg batch of its own (see [NewSender]): it sends as
// Send does, without taking a batch from the free list all of the process's Sends share.
func (c *UDPConn) NewSender() Sender { return &udpSender{c: c, b: newBatch()} }

// udpSender is a UDPConn's Sender: its batch is used by one goroutine at a time.
type udpSender struct {
	c *UDPConn
	b *mmsgBatch
}

func (s *udpSender) Send(msgs []Message) (int, error) {
	n, err := s.c.send(s.b, msgs)
	s.b.release()
	return n, err
}

// send is Send with the batch b.
func (c *UDPConn) send(b *mmsgBatch, msgs []Message) (int, error) {
	if c.closed.Load() {
		return 0, net.ErrClosed
	}
	done := 0
	var run *udpSocket // the socket of the prepared entries
	var last *Message  // the last message socketFor accepted, which left from run
	for i := 0; ; i++ {
		if i == len(msgs) {
			err := c.flush(b, run, msgs, &done)
			if err == errGSORefused {
				i, run, last = done-1, nil, nil
				continue
			}
			return done, err
		}
		m := &msgs[i]
		var s *udpSocket
		var err error
		if last != nil && m.Src == last.Src && m.Dst == last.Dst && m.SegmentSize == 0 && m.Len() <= last.Len() {
			s = run // a run of one flow: validated with the message before
		} else {
			s, err = c.socketFor(m)
			last = m
		}
		if err != nil {
			last = nil
			if ferr := c.flush(b, run, msgs, &done); ferr != nil {
				if ferr == errGSORefused {
					i, run, last = done-1, nil, nil
					continue
				}
				return done, ferr
			}
			return done, fmt.Errorf("send %v -> %v: %w", m.Src, m.Dst, err)
		}
		if s == run && b.canJoin(m) {
			if k := b.segs[b.count-1]; s.local.Addr().Is4() {
				c.cfg.SetIPv4ID(m, 0, uint16(k))
			}
			b.joinSend(m)
			continue
		}
		if s != run || b.count == IdealBatchSize || !b.roomFor() {
			if err := c.flush(b, run, msgs, &done); err != nil {
				if err == errGSORefused {
					i, run, last = done-1, nil, nil
					continue
				}
				return done, err
			}
			run = s
		}
		b.openSend(m, m.Dst, s.scope)
		// Multicast goes out unsegmented: a group's copy looped back to local members would
		// otherwise reach them as one coalesced buffer, and few datagrams go to groups.
		b.startRun(m, c.gsoAllowed(s) && !m.Dst.Addr().IsMulticast())
	}
}

// flush sends the b.count prepared entries, which hold msgs[*done:], on s.
func (c *UDPConn) flush(b *mmsgBatch, s *udpSocket, msgs []Message, done *int) error {
	defer b.reset()
	for b.first < b.count {
		n, err := b.run(s.rc, unix.SYS_SENDMMSG, true)
		c.counters.issued(b)
		for e := b.first; e < b.first+n; e++ {
			segs := int(b.segs[e])
			c.counters.sent(segs, int(b.hdrs[e].Len))
			if segs > 1 {
				c.counters.gsoSent(segs)
			}
			*done += segs
		}
		b.first += n
		if err != nil {
			// sendmmsg stops at the first entry it cannot send and fails on it when retried.
			if b.segs[b.first] > 1 && gsoRefused(err) {
				return c.gsoFallback(b, s, msgs, done, err)
			}
			c.counters.drop(DropSendError)
			// The caller gets the unsent messages back as they were given: renumbered to ID 0.
			c.renumber(b, s, msgs, *done)
			return err
		}
	}
	return nil
}

// socketFor validates m and returns the socket it leaves from.
func (c *UDPConn) socketFor(m *Message) (*udpSocket, error) {
	li, err := pickSource(c.locals, m)
	if err != nil {
		return nil, err
	}
	if m.SegmentSize != 0 {
		return nil, ErrSegmentSize
	}
	local := c.locals[li]
	if m.Len() > maxPayload(local.Addr()) {
		return nil, ErrMessageTooLong
	}
	port := m.Src.Port()
	if port == 0 || port == local.Port() {
		return c.listeners[li], nil
	}
	key := netip.AddrPortFrom(local.Addr(), port)
	if s := (*c.senders.Load())[key]; s != nil {
		return s, nil
	}
	return c.openSender(key)
}

// openSender creates the socket for source key on first use, in a copy of the table that then
// replaces it.
func (c *UDPConn) openSender(key netip.AddrPort) (*udpSocket, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := *c.senders.Load()
	if s := old[key]; s != nil {
		return s, nil
	}
	if c.closed.Load() {
		return nil, net.ErrClosed
	}
	if len(old) >= c.cfg.MaxSendSockets {
		return nil, ErrTooManySendSockets
	}
	s, err := openSocket(key, false, &c.cfg, c.ifindex[key.Addr()])
	if err != nil {
		return nil, err
	}
	senders := maps.Clone(old)
	senders[key] = s
	c.senders.Store(&senders)
	return s, nil
}

// Receive implements [Conn]. It may exchange Buf slices among msgs: every filled message's Buf is
// one of the buffers offered. TOS and TTL are reported as zero.
//
// With GRO on (the default), a listening socket reads coalesced runs straight into messages
// offered [CoalesceBufSize] bytes or more, one run per message (see Message.SegmentSize). For
// smaller buffers it reads up to [UDPConfig.GROSlots] runs per system call into 64 KiB buffers
// of its own, allocated on first use, and copies each datagram out into the next message,
// setting SegmentSize when it arrived coalesced; datagrams beyond len(msgs) wait for the next
// Receive, which returns them without a system call. Concurrent Receives on one socket take
// turns rather than reading side by side.
func (c *UDPConn) Receive(msgs []Message) (int, error) {
	if err := validateReceive(msgs); err != nil {
		return 0, err
	}
	if len(msgs) == 0 {
		return 0, nil
	}
	for {
		p := c.poll.Load()
		if p == nil {
			n, err := c.receiveFrom(c.listeners[0], msgs, true)
			if errors.Is(err, os.ErrDeadlineExceeded) && c.poll.Load() != nil {
				continue // a join switched to polling and woke this wait (see kickListener)
			}
			if n > 0 || err != nil {
				return n, err
			}
			continue
		}
		n, err := c.tryReadable(msgs)
		if n > 0 || err != nil {
			return n, err
		}
		if err := p.wait(); err != nil {
			return 0, err
		}
	}
}

var _ ReadableWaiter = (*UDPConn)(nil)

// WaitReadable implements [ReadableWaiter], for the listening sockets and the joined groups'.
func (c *UDPConn) WaitReadable() error {
	for {
		if p := c.poll.Load(); p != nil {
			return p.wait()
		}
		s := c.listeners[0]
		s.waitMu.Lock()
		s.looked = false
		err := s.rc.Read(s.readyLook)
		s.waitMu.Unlock()
		if errors.Is(err, os.ErrDeadlineExceeded) && c.poll.Load() != nil {
			continue // a join switched to polling (see kickListener)
		}
		return err
	}
}

// readyLookCall is WaitReadable's netpoller callback. Its first call looks at the socket (a
// datagram peeked at, not read), since the netpoller forgets a readiness that came before the
// wait began. A later call follows the netpoller's wake-up and returns without looking again,
// one system call fewer per wake-up: the caller reads next anyway, and a read that finds nothing
// tells it a busy poller took the datagrams first. The caller holds s.waitMu.
func (s *udpSocket) readyLookCall(fd uintptr) bool {
	if s.looked {
		return true
	}
	s.looked = true
	var b byte
	_, _, e := unix.Syscall6(unix.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b)), 1,
		unix.MSG_PEEK|unix.MSG_DONTWAIT, 0, 0)
	return e != unix.EAGAIN
}

// tryReadable reads, without waiting, from the first of the readable sockets that holds
// datagrams, starting at a different one each call for fairness. A group socket closed by a
// concurrent LeaveGroup is passed over.
func (c *UDPConn) tryReadable(msgs []Message) (int, error) {
	socks := *c.readable.Load()
	start := 0
	if len(socks) > 1 {
		start = int(c.next.Add(1))
	}
	for k := range socks {
		s := socks[(start+k)%len(socks)]
		n, err := c.receiveFrom(s, msgs, false)
		if err != nil && s.group && errors.Is(err, net.ErrClosed) && !c.closed.Load() {
			continue
		}
		if n > 0 || err != nil {
			return n, err
		}
	}
	return 0, nil
}

var _ PollableConn = (*UDPConn)(nil)

// ReadableFDs implements [PollableConn]: the listening sockets and the joined groups'.
func (c *UDPConn) ReadableFDs(dst []int) []int {
	if c.closed.Load() {
		return dst
	}
	for _, s := range *c.readable.Load() {
		_ = s.rc.Control(func(fd uintptr) { dst = append(dst, int(fd)) }) // a socket closed meanwhile is left out
	}
	return dst
}

// TryReceive implements [Conn]: it reads what the listening sockets already hold, starting at a
// different one each call, and returns 0 at once when they hold nothing. It never waits behind a
// Receive that waits for the network.
func (c *UDPConn) TryReceive(msgs []Message) (int, error) {
	if err := validateReceive(msgs); err != nil {
		return 0, err
	}
	if len(msgs) == 0 {
		return 0, nil
	}
	return c.tryReadable(msgs)
}

// receiveFrom reads one batch from s, dropping truncated datagrams; it may return 0 if all were.
func (c *UDPConn) receiveFrom(s *udpSocket, msgs []Message, wait bool) (int, error) {
	if s.gro {
		return c.receiveGRO(s, msgs, wait)
	}
	var b *mmsgBatch
	if s.rxMu.TryLock() {
		defer s.rxMu.Unlock()
		if s.rxb == nil {
			s.rxb = newReceiveBatch()
		}
		b = s.rxb
		b.count = min(len(msgs), IdealBatchSize)
		for i := 0; i < b.count; i++ {
			b.pointReceive(i, msgs[i].Buf)
		}
	} else {
		b = getBatch()
		defer putBatch(b)
		b.count = min(len(msgs), IdealBatchSize)
		for i := 0; i < b.count; i++ {
			b.setReceive(i, msgs[i].Buf)
		}
	}
	got, err := b.run(s.rc, unix.SYS_RECVMMSG, wait)
	c.counters.issued(b)
	if err != nil {
		if errors.Is(err, net.ErrClosed) || c.closed.Load() {
			return 0, net.ErrClosed
		}
		return 0, err
	}
	return c.filled(s, b, msgs, got), nil
}

// filled completes the messages a read of got entries straight into msgs filled, each with a
// datagram or, with GRO, a coalesced run, dropping truncated ones (moving the rest up), and
// returns how many there are.
func (c *UDPConn) filled(s *udpSocket, b *mmsgBatch, msgs []Message, got int) int {
	n, datagrams, bytes := 0, 0, 0
	for i := range got {
		size, truncated, src := b.received(i)
		if truncated {
			c.counters.drop(DropTruncated)
			continue
		}
		msgs[n], msgs[i] = msgs[i], msgs[n]
		m := &msgs[n]
		m.Buf = m.Buf[:size]
		m.Src, m.Dst = s.source(src), s.local
		m.TOS, m.TTL, m.SegmentSize = 0, 0, 0
		if seg := b.groSegment(i); seg > 0 && seg < size {
			m.SegmentSize = uint16(seg)
		}
		datagrams += m.Datagrams()
		bytes += size
		n++
	}
	c.counters.received(datagrams, bytes)
	return n
}

// source completes a received source address with the zone of a link-local listener.
func (s *udpSocket) source(src netip.AddrPort) netip.AddrPort {
	if src.Addr().Is6() && s.local.Addr().Zone() != "" && src.Addr().IsLinkLocalUnicast() {
		return netip.AddrPortFrom(src.Addr().WithZone(s.local.Addr().Zone()), src.Port())
	}
	return src
}

// BatchSize implements [Conn].
func (c *UDPConn) BatchSize() int { return IdealBatchSize }

// ReceiveBufSize implements [Conn]: with GRO on, messages offered [CoalesceBufSize] bytes receive
// coalesced runs whole.
func (c *UDPConn) ReceiveBufSize() int {
	if c.cfg.DisableGRO {
		return 0
	}
	return CoalesceBufSize
}

// LocalAddrs implements [Conn].
func (c *UDPConn) LocalAddrs() []netip.AddrPort { return append([]netip.AddrPort(nil), c.locals...) }

// Counters implements [Conn]. Drops[DropQueueFull] counts the datagrams the kernel dropped for
// a listening socket, nearly always because its receive buffer was full.
func (c *UDPConn) Counters() Counters {
	s := c.counters.snapshot()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dropsKept {
		s.Drops[DropQueueFull] += c.listenerDrops()
	}
	return s
}

// listenerDrops sums the kernel's drop counts of the listening sockets.
func (c *UDPConn) listenerDrops() uint64 {
	var sum uint64
	for _, l := range c.listeners {
		if d, ok := kernelDrops(l.rc); ok {
			sum += d
		}
	}
	return sum
}

// SendSockets returns the number of source-port sockets opened so far.
func (c *UDPConn) SendSockets() int { return len(*c.senders.Load()) }

// Close implements [Conn].
func (c *UDPConn) Close() error {
	if c.closed.Swap(true) {
		return net.ErrClosed
	}
	if p := c.poll.Load(); p != nil {
		p.wake()
	}
	c.mu.Lock()
	// The kernel's drop counts go with the sockets; keep them.
	c.counters.drops[DropQueueFull].Add(c.listenerDrops())
	c.dropsKept = true
	for _, s := range c.listeners {
		s.conn.Close()
	}
	for _, s := range *c.senders.Load() {
		s.conn.Close()
	}
	c.senders.Store(new(map[netip.AddrPort]*udpSocket{}))
	c.mu.Unlock()
	c.closeGroups()
	if p := c.poll.Load(); p != nil {
		p.close()
	}
	return nil
}

// poller blocks until any of several sockets is readable or the Conn closes. The Go netpoller can
// only wait on one socket per goroutine, so a Receive over several listeners waits in an epoll
// instance of its own (level-triggered, alongside the runtime's) and then reads without waiting.
type poller struct {
	life   sync.RWMutex // wait holds it shared while using the descriptors; close takes it exclusively
	closed bool         // guarded by life
	epfd   int
	wakefd int // an eventfd made readable by wake
}

func newPoller(socks []*udpSocket) (*poller, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	wakefd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	p := &poller{epfd: epfd, wakefd: wakefd}
	add := func(fd int) error {
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}
		return unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, fd, &ev)
	}
	err = add(wakefd)
	for _, s := range socks {
		if err != nil {
			break
		}
		if cerr := s.rc.Control(func(fd uintptr) { err = add(int(fd)) }); cerr != nil {
			err = cerr
		}
	}
	if err != nil {
		p.close()
		return nil, fmt.Errorf("epoll_ctl: %w", err)
	}
	return p, nil
}

// wait returns when a registered descriptor is readable, or net.ErrClosed after close.
func (p *poller) wait() error {
	p.life.RLock()
	defer p.life.RUnlock()
	if p.closed {
		return net.ErrClosed
	}
	var events [4]unix.EpollEvent
	_, err := unix.EpollWait(p.epfd, events[:], -1)
	if err != nil && err != unix.EINTR {
		return fmt.Errorf("epoll_wait: %w", err)
	}
	return nil
}

// wake makes every current and future wait return; the eventfd stays readable.
func (p *poller) wake() {
	one := [8]byte{1}
	_, _ = unix.Write(p.wakefd, one[:])
}

// close waits for waiters to leave, which wake guarantees, and releases the descriptors.
func (p *poller) close() {
	p.life.Lock()
	defer p.life.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	unix.Close(p.epfd)
	unix.Close(p.wakefd)
}
