package mckey

import (
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cm/mad"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/loglevel"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
)

func TestParseArgs(t *testing.T) {
	o, err := ParseArgs([]string{"-m", "239.1.2.3"})
	require.NoError(t, err)
	assert.Equal(t, Options{Group: netip.MustParseAddr("239.1.2.3"), Connections: 1, Count: 10, Size: 100,
		PortSpace: mad.PortSpaceUDP, Pause: 3 * time.Second, Common: tool.NewCommon()}, o)

	o, err = ParseArgs([]string{"-m", "ff0e::1", "-s", "-b", "fd00::2", "-c", "3", "-C", "5", "-S", "1024", "-p", "0x2", "-o",
		"--pause", "0", "--timeout", "10s", "--bind", "eth0"})
	require.NoError(t, err)
	assert.Equal(t, Options{Group: netip.MustParseAddr("ff0e::1"), BindAddr: netip.MustParseAddr("fd00::2"), Sender: true,
		Connections: 3, Count: 5, Size: 1024, PortSpace: mad.PortSpaceIPoIB, SendOnly: true,
		Timeout: 10 * time.Second, Common: tool.Common{Bind: "eth0", LogLevel: loglevel.Default}}, o)

	o, err = ParseArgs([]string{"-M", "::ffff:239.1.2.3", "-b", "10.0.0.1", "-p", "273"})
	require.NoError(t, err)
	assert.True(t, o.Unmapped)
	assert.Equal(t, netip.MustParseAddr("239.1.2.3"), o.Group, "an IPv4-mapped GID names its IPv4 group")
	assert.Equal(t, mad.PortSpaceUDP, o.PortSpace, "-p takes decimal too")

	o, err = ParseArgs([]string{"-m", "239.1.2.3", "-S", "0"})
	require.NoError(t, err)
	assert.Zero(t, o.Count, "no message to send without a size")

	o, err = ParseArgs([]string{"-m", "239.1.2.3", "-l"})
	require.NoError(t, err)
	assert.True(t, o.NoLoopback, "-l parses; creating the QP refuses it, as rxe does")

	_, err = ParseArgs([]string{"-h"})
	assert.ErrorIs(t, err, tool.ErrHelp)
	for _, args := range [][]string{
		{}, {"-m"}, {"-M", "ff0e::1"}, {"-M", "239.1.1.1", "-b", "10.0.0.1"}, {"-m", "239.1.1.1", "-p", "0x106"},
		{"-m", "239.1.1.1", "-p", "udp"}, {"-m", "239.1.1.1", "operand"}, {"-m", "239.1.1.1", "-x"},
	} {
		_, err := ParseArgs(args)
		assert.ErrorIs(t, err, getopt.ErrUsage, "%q", args)
	}
	for _, args := range [][]string{{"-m", "10.0.0.1"}, {"-m", "not-an-address"}, {"-m", "239.1.1.1", "-b", "x"}} {
		_, err := ParseArgs(args)
		require.Error(t, err, "%q", args)
		assert.NotErrorIs(t, err, getopt.ErrUsage, "%q", args)
	}
}
