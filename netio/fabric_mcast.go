package netio

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
)

var _ GroupConn = (*Endpoint)(nil)

// JoinGroup implements [GroupConn]: the endpoint receives what is sent to group at its port.
func (e *Endpoint) JoinGroup(group netip.Addr) error {
	if err := checkGroup(group); err != nil {
		return err
	}
	if e.isClosed() {
		return net.ErrClosed
	}
	key := netip.AddrPortFrom(groupKey(group), e.locals[0].Port())
	f := e.fabric
	f.mu.Lock()
	defer f.mu.Unlock()
	if e.joined == nil {
		e.joined = make(map[netip.AddrPort]int)
	}
	if e.joined[key]++; e.joined[key] == 1 {
		f.setMembers(key, append(slices.Clone(f.groups[key]), e))
		e.counters.groupJoins.Add(1)
	}
	return nil
}

// LeaveGroup implements [GroupConn].
func (e *Endpoint) LeaveGroup(group netip.Addr) error {
	if err := checkGroup(group); err != nil {
		return err
	}
	key := netip.AddrPortFrom(groupKey(group), e.locals[0].Port())
	f := e.fabric
	f.mu.Lock()
	defer f.mu.Unlock()
	if e.joined[key] == 0 {
		return fmt.Errorf("leave %v: %w", key.Addr(), ErrNotJoined)
	}
	if e.joined[key]--; e.joined[key] == 0 {
		delete(e.joined, key)
		f.setMembers(key, slices.DeleteFunc(slices.Clone(f.groups[key]), func(x *Endpoint) bool { return x == e }))
		e.counters.groupLeaves.Add(1)
	}
	return nil
}

// setMembers records the members of group g; the caller holds f.mu.
func (f *Fabric) setMembers(g netip.AddrPort, m []*Endpoint) {
	if len(m) == 0 {
		delete(f.groups, g)
		return
	}
	f.groups[g] = m
}
