package udaddy

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
)

func TestParseArgs(t *testing.T) {
	o, err := ParseArgs(nil)
	require.NoError(t, err)
	assert.False(t, o.Server.IsValid(), "no -s: server")
	assert.Equal(t, []int{DefaultPort, 1, 10, 100}, []int{o.Port, o.Connections, o.Count, o.Size})
	assert.Zero(t, o.TrafficClass)

	o, err = ParseArgs([]string{"-s", "10.0.0.1", "-b", "10.0.0.2", "-c", "3", "-C", "5", "-S", "1024", "-t", "0x20",
		"-f", "ip", "-P", "udp", "-p", "0x111", "--port", "9000"})
	require.NoError(t, err)
	assert.Equal(t, netip.MustParseAddr("10.0.0.1"), o.Server)
	assert.Equal(t, netip.MustParseAddr("10.0.0.2"), o.BindAddr)
	assert.Equal(t, []int{9000, 3, 5, 1024}, []int{o.Port, o.Connections, o.Count, o.Size})
	assert.Equal(t, uint8(0x20), o.TrafficClass)

	o, err = ParseArgs([]string{"-S", "0"})
	require.NoError(t, err)
	assert.Zero(t, o.Count, "no message to send without a size")

	for _, args := range [][]string{{"-P", "ipoib"}, {"-p", "0x2"}, {"-f", "gid"}, {"-t", "256"}, {"operand"}} {
		_, err := ParseArgs(args)
		assert.ErrorIs(t, err, getopt.ErrUsage, "%q", args)
	}
	_, err = ParseArgs([]string{"-s", "nowhere"})
	require.EqualError(t, err, "-s nowhere: invalid IP address")
}
