package cmatose

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

	o, err = ParseArgs([]string{"-s", "10.0.0.1", "-b", "10.0.0.2", "-c", "3", "-C", "5", "-S", "4096", "-p", "9000", "-f", "ip", "-P", "tcp"})
	require.NoError(t, err)
	assert.Equal(t, netip.MustParseAddr("10.0.0.1"), o.Server)
	assert.Equal(t, netip.MustParseAddr("10.0.0.2"), o.BindAddr)
	assert.Equal(t, []int{9000, 3, 5, 4096}, []int{o.Port, o.Connections, o.Count, o.Size})

	o, err = ParseArgs([]string{"-S", "0"})
	require.NoError(t, err)
	assert.Zero(t, o.Count, "no message to send without a size")

	// ucmatose has no UDP port space: like any name but tcp and ib, udp draws its warning and
	// the TCP port space.
	o, err = ParseArgs([]string{"-P", "udp"})
	require.NoError(t, err)
	assert.Equal(t, []string{"Warning: unknown port space format"}, o.Warnings)
	o, err = ParseArgs([]string{"-P", "TCP"})
	require.NoError(t, err)
	assert.Empty(t, o.Warnings)

	// -t and -a set the connections' TOS and ACK timeout; -m changes nothing on gorxe.
	o, err = ParseArgs([]string{"-s", "10.0.0.1", "-t", "32", "-a", "18", "-m"})
	require.NoError(t, err)
	assert.Equal(t, []int{32, 18}, []int{o.TOS, int(o.AckTimeout)})

	for _, args := range [][]string{{"-P", "ib"}, {"-f", "gid"}, {"-t", "256"}, {"-a", "32"}, {"operand"}} {
		_, err := ParseArgs(args)
		assert.ErrorIs(t, err, getopt.ErrUsage, "%q", args)
	}
}
