package netio

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gorxe/gorxe/internal/netdev"
)

// Multicast on the UDP backend.
//
// A listening socket is bound to one unicast address, and Linux hands a multicast datagram only
// to sockets bound to the wildcard or to the group address itself, so each joined group gets a
// socket of its own, bound to the group address and the listening port with SO_REUSEADDR (which
// lets several devices and processes on one host bind the same group, each getting a copy). It
// joins the group on the interface of every local address of the group's family: IP_ADD_MEMBERSHIP
// (the kernel sends the IGMP report) or IPV6_JOIN_GROUP (MLD). Closing it leaves.
//
// Sends to a group leave from the ordinary sockets: Linux routes an IPv4 multicast from a bound
// source address out of the interface that owns it, and every IPv6 socket is given
// IPV6_MULTICAST_IF for the same effect. The TTL or hop limit is the message's, as for unicast:
// the per-datagram IP_TTL / IPV6_HOPLIMIT overrides the socket's multicast default of 1. Loopback
// of multicast sends (IP_MULTICAST_LOOP, IPV6_MULTICAST_LOOP) keeps Linux's default, on, as
// kernel rxe's sockets do: a group member on the sending host, the sending device included,
// receives its own datagrams.
//
// With one listener and no group, Receive waits on the listener through the Go netpoller. The
// first join moves the Conn to the epoll-based poller that several listeners use, and wakes a
// Receive waiting on the listener by setting a read deadline that has passed (kickListener).

// groupSocket is the socket of one joined group and the number of joins it stands for.
type groupSocket struct {
	s    *udpSocket
	refs int
}

// JoinGroup implements [GroupConn].
func (c *UDPConn) JoinGroup(group netip.Addr) error {
	if err := checkGroup(group); err != nil {
		return err
	}
	key := groupKey(group)
	c.gmu.Lock()
	defer c.gmu.Unlock()
	if c.closed.Load() {
		return net.ErrClosed
	}
	if g := c.groups[key]; g != nil {
		g.refs++
		return nil
	}
	var locals []netip.AddrPort
	for _, l := range c.locals {
		if l.Addr().Is4() == key.Is4() {
			locals = append(locals, l)
		}
	}
	if len(locals) == 0 {
		return fmt.Errorf("join %v: %w", key, ErrNoSourceAddress)
	}
	s, err := c.openGroupSocket(key, locals)
	if err != nil {
		return fmt.Errorf("join %v: %w", key, err)
	}
	p := c.poll.Load()
	if p == nil {
		if p, err = newPoller(nil); err != nil {
			s.conn.Close()
			return err
		}
	}
	if err := p.add(s); err != nil {
		s.conn.Close()
		if c.poll.Load() == nil {
			p.close()
		}
		return err
	}
	socks := append(slices.Clone(*c.readable.Load()), s)
	if c.poll.Load() == nil {
		// The listener joins the poller, and the group socket the readable set, before the
		// switch is published, so that no datagram waits unseen.
		if err := p.add(c.listeners[0]); err != nil {
			s.conn.Close()
			p.close()
			return err
		}
		c.readable.Store(&socks)
		c.poll.Store(p)
		c.kickListener()
	} else {
		c.readable.Store(&socks)
	}
	c.groups[key] = &groupSocket{s: s, refs: 1}
	c.counters.groupJoins.Add(1)
	return nil
}

// LeaveGroup implements [GroupConn].
func (c *UDPConn) LeaveGroup(group netip.Addr) error {
	if err := checkGroup(group); err != nil {
		return err
	}
	key := groupKey(group)
	c.gmu.Lock()
	defer c.gmu.Unlock()
	g := c.groups[key]
	if g == nil {
		return fmt.Errorf("leave %v: %w", key, ErrNotJoined)
	}
	if g.refs--; g.refs > 0 {
		return nil
	}
	delete(c.groups, key)
	socks := slices.DeleteFunc(slices.Clone(*c.readable.Load()), func(s *udpSocket) bool { return s == g.s })
	c.readable.Store(&socks)
	if p := c.poll.Load(); p != nil {
		p.remove(g.s)
	}
	g.s.conn.Close()
	c.counters.groupLeaves.Add(1)
	return nil
}

// Groups returns the joined groups.
func (c *UDPConn) Groups() []netip.Addr {
	c.gmu.Lock()
	defer c.gmu.Unlock()
	out := make([]netip.Addr, 0, len(c.groups))
	for g := range c.groups {
		out = append(out, g)
	}
	slices.SortFunc(out, netip.Addr.Compare)
	return out
}

// closeGroups closes every group socket; Close calls it after marking the Conn closed.
func (c *UDPConn) closeGroups() {
	c.gmu.Lock()
	defer c.gmu.Unlock()
	for k, g := range c.groups {
		g.s.conn.Close()
		delete(c.groups, k)
	}
}

// kickListener wakes a Receive waiting on the only listener so that it moves to the poller. The
// deadline stays: a polling Receive never waits on a single socket again, and TryReceive and
// the polling reads do not look at deadlines.
func (c *UDPConn) kickListener() {
	_ = c.listeners[0].conn.SetReadDeadline(time.Unix(1, 0))
}

// openGroupSocket binds group at the listening port and joins it on the interfaces of locals.
func (c *UDPConn) openGroupSocket(group netip.Addr, locals []netip.AddrPort) (*udpSocket, error) {
	port := locals[0].Port()
	bind := netip.AddrPortFrom(group, port)
	if group.Is6() {
		if group.IsLinkLocalMulticast() || group.IsInterfaceLocalMulticast() {
			// A scoped group is bound in the zone of the first local address.
			bind = netip.AddrPortFrom(group.WithZone(zoneOf(locals[0].Addr(), c.ifindex[locals[0].Addr()])), port)
		}
	}
	conn, err := bindGroup(bind, c.cfg.SocketBuffer)
	if err != nil {
		return nil, err
	}
	rc, err := conn.SyscallConn()
	if err != nil {
		conn.Close()
		return nil, err
	}
	joined := map[int]bool{}
	for _, l := range locals {
		idx := c.ifindex[l.Addr()]
		if joined[idx] {
			continue // two addresses on one interface: one membership
		}
		joined[idx] = true
		if err := joinOn(rc, group, l.Addr(), idx); err != nil {
			conn.Close()
			return nil, err
		}
	}
	return &udpSocket{conn: conn, rc: rc, local: netip.AddrPortFrom(group, port), group: true}, nil
}

// joinOn adds a membership of group on the interface of local (ifindex, when known).
func joinOn(rc syscall.RawConn, group, local netip.Addr, ifindex int) error {
	var err error
	cerr := rc.Control(func(fd uintptr) {
		if group.Is4() {
			// With the index unknown, the kernel finds the interface from the address.
			mreq := unix.IPMreqn{Multiaddr: group.As4(), Address: local.Unmap().As4(), Ifindex: int32(ifindex)}
			err = unix.SetsockoptIPMreqn(int(fd), unix.IPPROTO_IP, unix.IP_ADD_MEMBERSHIP, &mreq)
			if err != nil {
				err = os.NewSyscallError("setsockopt IP_ADD_MEMBERSHIP", err)
			}
			return
		}
		mreq := unix.IPv6Mreq{Multiaddr: group.As16(), Interface: uint32(ifindex)}
		err = unix.SetsockoptIPv6Mreq(int(fd), unix.IPPROTO_IPV6, unix.IPV6_JOIN_GROUP, &mreq)
		if err != nil {
			err = os.NewSyscallError("setsockopt IPV6_JOIN_GROUP", err)
		}
	})
	if cerr != nil {
		return cerr
	}
	return err
}

// setMulticastInterface makes an IPv6 socket send multicast out of its address's interface;
// Linux already does that for IPv4 sockets bound to an address.
func setMulticastInterface(rc syscall.RawConn, local netip.Addr, ifindex int) error {
	if local.Is4() || ifindex == 0 {
		return nil
	}
	var err error
	cerr := rc.Control(func(fd uintptr) {
		if e := unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_MULTICAST_IF, ifindex); e != nil {
			err = &syscallOptError{name: "IPV6_MULTICAST_IF", err: e}
		}
	})
	if cerr != nil {
		return cerr
	}
	return err
}

// interfaceIndexes finds the interface of each local address.
func interfaceIndexes(locals []netip.AddrPort) map[netip.Addr]int {
	m := make(map[netip.Addr]int, len(locals))
	for _, l := range locals {
		m[l.Addr()] = netdev.Index(l.Addr())
	}
	return m
}

// zoneOf names the interface of a: its zone, or the name of interface ifindex.
func zoneOf(a netip.Addr, ifindex int) string {
	if z := a.Zone(); z != "" {
		return z
	}
	if ifi, err := net.InterfaceByIndex(ifindex); err == nil {
		return ifi.Name
	}
	return ""
}

// add registers s with the poller.
func (p *poller) add(s *udpSocket) error {
	var err error
	cerr := s.rc.Control(func(fd uintptr) {
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}
		err = unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, int(fd), &ev)
	})
	if cerr != nil {
		return cerr
	}
	if err != nil {
		return fmt.Errorf("epoll_ctl: %w", err)
	}
	return nil
}

// remove unregisters s before it closes.
func (p *poller) remove(s *udpSocket) {
	_ = s.rc.Control(func(fd uintptr) {
		_ = unix.EpollCtl(p.epfd, unix.EPOLL_CTL_DEL, int(fd), nil)
	})
}

// bindGroup opens a UDP socket bound to the group address itself. The net package would bind
// the wildcard address instead (it does for any multicast address), and a wildcard socket gets
// the unicast datagrams of every local address at the port, other devices' included.
// SO_REUSEADDR lets every device and process on the host that joins the group bind it too.
func bindGroup(bind netip.AddrPort, sockBuf int) (*net.UDPConn, error) {
	group := bind.Addr()
	family := unix.AF_INET
	var sa unix.Sockaddr
	if group.Is4() {
		sa = &unix.SockaddrInet4{Port: int(bind.Port()), Addr: group.As4()}
	} else {
		family = unix.AF_INET6
		sa6 := &unix.SockaddrInet6{Port: int(bind.Port()), Addr: group.As16()}
		if z := group.Zone(); z != "" {
			if ifi, err := net.InterfaceByName(z); err == nil {
				sa6.ZoneId = uint32(ifi.Index)
			}
		}
		sa = sa6
	}
	fd, err := unix.Socket(family, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_UDP)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	f := os.NewFile(uintptr(fd), "udp-group-"+bind.String())
	defer f.Close() // FilePacketConn holds a duplicate
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		return nil, os.NewSyscallError("setsockopt SO_REUSEADDR", err)
	}
	if family == unix.AF_INET6 {
		// Kernel rxe sends IPv6 UDP with checksum 0, as the listeners allow too.
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_UDP, unix.UDP_NO_CHECK6_RX, 1); err != nil {
			return nil, os.NewSyscallError("setsockopt UDP_NO_CHECK6_RX", err)
		}
	}
	if sockBuf > 0 {
		setBuffer(fd, unix.SO_RCVBUFFORCE, unix.SO_RCVBUF, sockBuf)
	}
	if err := unix.Bind(fd, sa); err != nil {
		return nil, &net.OpError{Op: "listen", Net: "udp", Addr: net.UDPAddrFromAddrPort(bind), Err: os.NewSyscallError("bind", err)}
	}
	pc, err := net.FilePacketConn(f)
	if err != nil {
		return nil, err
	}
	return pc.(*net.UDPConn), nil
}
