package netio

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFabricMulticast(t *testing.T) {
	_, _, a, b := newPair(t, FabricConfig{})
	group := netip.MustParseAddr("239.1.2.3")
	dst := netip.AddrPortFrom(group, DefaultPort)

	// Nobody joined: the datagram has nowhere to go.
	sendSeq(t, a, dst, 0, 1)
	assert.Equal(t, uint64(1), a.Counters().Drops[DropNoRoute])

	require.NoError(t, a.JoinGroup(group))
	require.NoError(t, b.JoinGroup(group))
	require.NoError(t, b.JoinGroup(netip.MustParseAddr("::ffff:239.1.2.3")), "a mapped address names the same group")
	sendSeq(t, a, dst, 1, 1)
	assert.Equal(t, []int{1}, receiveAll(t, a), "the sender is a member too: loopback")
	assert.Equal(t, []int{1}, receiveAll(t, b))

	require.NoError(t, a.LeaveGroup(group))
	require.NoError(t, b.LeaveGroup(group))
	sendSeq(t, a, dst, 2, 1)
	assert.Empty(t, receiveAll(t, a))
	assert.Equal(t, []int{2}, receiveAll(t, b), "b joined twice and left once")
	require.NoError(t, b.LeaveGroup(group))
	assert.ErrorIs(t, b.LeaveGroup(group), ErrNotJoined)
	assert.ErrorIs(t, b.JoinGroup(addrA), ErrNotMulticast)
	assert.Equal(t, uint64(1), b.Counters().GroupJoins)
	assert.Equal(t, uint64(1), b.Counters().GroupLeaves)

	// An endpoint listening on the group address that also joined it gets one copy.
	f := a.fabric
	g, err := f.NewEndpoint(0, group)
	require.NoError(t, err)
	require.NoError(t, g.JoinGroup(group))
	sendSeq(t, a, dst, 9, 1)
	assert.Equal(t, []int{9}, receiveAll(t, g))
	require.NoError(t, g.LeaveGroup(group))
	require.NoError(t, g.Close())

	// A closed endpoint leaves its groups.
	require.NoError(t, b.JoinGroup(group))
	require.NoError(t, b.Close())
	sendSeq(t, a, dst, 3, 1)
	assert.Equal(t, uint64(2), a.Counters().Drops[DropNoRoute])
}
