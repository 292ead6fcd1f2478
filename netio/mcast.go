package netio

import (
	"errors"
	"net/netip"
)

// ErrNotMulticast: JoinGroup or LeaveGroup was given an address that is not a multicast group.
var ErrNotMulticast = errors.New("not a multicast group address")

// ErrNotJoined: LeaveGroup was given a group the Conn has not joined.
var ErrNotJoined = errors.New("multicast group not joined")

// GroupConn is a [Conn] that receives the datagrams sent to a multicast group only after joining
// it: the UDP backend, which must tell the kernel (IGMP for IPv4, MLD for IPv6), and the fabric.
// Joins are counted: a group joined twice stays joined until it is left twice. A datagram received
// for a group has the group address and the listening port as its Dst.
//
// Sending to a group needs no join: a Message whose Dst is a group address goes out to the group
// from the local address Src selects, with the TTL (hop limit) the message carries.
type GroupConn interface {
	Conn
	// JoinGroup starts receiving the datagrams sent to group at the listening port, on the
	// interfaces of every local address of group's family.
	JoinGroup(group netip.Addr) error
	// LeaveGroup undoes one JoinGroup; the last one stops the group's datagrams.
	LeaveGroup(group netip.Addr) error
}

// JoinGroup joins c to group when c is a [GroupConn]. Any other Conn delivers by address alone
// and needs no join, so it succeeds.
func JoinGroup(c Conn, group netip.Addr) error {
	if g, ok := c.(GroupConn); ok {
		return g.JoinGroup(group)
	}
	return checkGroup(group)
}

// LeaveGroup undoes [JoinGroup].
func LeaveGroup(c Conn, group netip.Addr) error {
	if g, ok := c.(GroupConn); ok {
		return g.LeaveGroup(group)
	}
	return checkGroup(group)
}

// checkGroup rejects addresses that are not multicast groups.
func checkGroup(group netip.Addr) error {
	if !group.Unmap().IsMulticast() {
		return ErrNotMulticast
	}
	return nil
}

// groupKey is the form a group is recorded under: unmapped, without a zone.
func groupKey(group netip.Addr) netip.Addr { return group.Unmap().WithZone("") }

func (t *tapConn) JoinGroup(group netip.Addr) error  { return JoinGroup(t.Conn, group) }
func (t *tapConn) LeaveGroup(group netip.Addr) error { return LeaveGroup(t.Conn, group) }

// JoinGroup implements [GroupConn] by joining the inner Conn.
func (c *FaultConn) JoinGroup(group netip.Addr) error { return JoinGroup(c.inner, group) }

// LeaveGroup implements [GroupConn] by leaving on the inner Conn.
func (c *FaultConn) LeaveGroup(group netip.Addr) error { return LeaveGroup(c.inner, group) }

var (
	_ GroupConn = (*tapConn)(nil)
	_ GroupConn = (*FaultConn)(nil)
	_ GroupConn = (*UDPConn)(nil)
)
