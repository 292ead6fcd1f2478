package netio

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestReadableFDs: a UDP Conn's descriptors are its listening sockets, bound to its addresses and
// found under a Tap and a FaultConn too, and its joined groups' sockets; a closed Conn and a Conn
// without sockets have none.
func TestReadableFDs(t *testing.T) {
	c := listenPair(t, UDPConfig{}, []netip.Addr{lo1, lo2})[0]
	faulty, err := WithFaults(c, FaultConfig{}, nil)
	require.NoError(t, err)
	for name, conn := range map[string]Conn{"conn": c, "tap over faults": Tap(faulty, func(Direction, *Message) {})} {
		var bound []netip.AddrPort
		for _, fd := range ReadableFDs(conn, nil) {
			sa, err := unix.Getsockname(fd)
			require.NoError(t, err, name)
			in, ok := sa.(*unix.SockaddrInet4)
			require.True(t, ok, name)
			bound = append(bound, netip.AddrPortFrom(netip.AddrFrom4(in.Addr), uint16(in.Port)))
		}
		assert.ElementsMatch(t, c.LocalAddrs(), bound, name)
	}

	// A joined group's socket is read like a listening one, so a waiter must poll it too, and
	// stops when the group is left.
	group := groupFor(c, false)
	joinOrSkip(t, c, group)
	var groupFDs int
	for _, fd := range ReadableFDs(c, nil) {
		sa, err := unix.Getsockname(fd)
		require.NoError(t, err)
		if in, ok := sa.(*unix.SockaddrInet4); ok && netip.AddrFrom4(in.Addr) == group {
			groupFDs++
		}
	}
	assert.Equal(t, 1, groupFDs, "descriptors bound to the joined group")
	assert.Len(t, ReadableFDs(c, nil), len(c.LocalAddrs())+1)
	require.NoError(t, c.LeaveGroup(group))
	assert.Len(t, ReadableFDs(c, nil), len(c.LocalAddrs()), "after leaving the group")

	fab := NewFabric(FabricConfig{})
	defer fab.Close()
	ep, err := fab.NewEndpoint(4791, netip.MustParseAddr("10.0.0.1"))
	require.NoError(t, err)
	assert.Empty(t, ReadableFDs(ep, nil), "a fabric endpoint")

	require.NoError(t, c.Close())
	assert.Empty(t, ReadableFDs(c, nil), "closed")
}
