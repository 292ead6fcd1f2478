package gorxe

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestNetworkFDs: a device on UDP sockets gives the descriptors of its listening sockets, bound
// to its address and RoCE port; one on a supplied network and a closed one give none.
func TestNetworkFDs(t *testing.T) {
	port := loopbackPort(t)
	d := openUDP(t, "127.0.0.1", port)
	fds := d.NetworkFDs(nil)
	require.NotEmpty(t, fds)
	for _, fd := range fds {
		sa, err := unix.Getsockname(fd)
		require.NoError(t, err)
		in, ok := sa.(*unix.SockaddrInet4)
		require.True(t, ok)
		assert.Equal(t, [4]byte{127, 0, 0, 1}, in.Addr)
		assert.Equal(t, int(port), in.Port)
	}
	assert.Empty(t, newTestFabric(t).open(t, "10.0.0.1").NetworkFDs(nil), "a supplied network")
	require.NoError(t, d.Close())
	assert.Empty(t, d.NetworkFDs(nil), "closed")
}
