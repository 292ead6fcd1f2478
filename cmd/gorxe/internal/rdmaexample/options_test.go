package rdmaexample

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
)

func TestParseArgs(t *testing.T) {
	o, err := ParseArgs(Client, nil)
	require.NoError(t, err)
	assert.Equal(t, netip.MustParseAddr("127.0.0.1"), o.Server, "the C client's default server")
	assert.Equal(t, DefaultPort, o.Port)

	o, err = ParseArgs(Client, []string{"-s", "10.0.0.1", "-p", "9000"})
	require.NoError(t, err)
	assert.Equal(t, netip.MustParseAddr("10.0.0.1"), o.Server)
	assert.Equal(t, 9000, o.Port)

	o, err = ParseArgs(Server, []string{"-p", "9001", "--bind", "10.0.0.2"})
	require.NoError(t, err)
	assert.Equal(t, Server, o.Role)
	assert.Equal(t, []any{9001, "10.0.0.2"}, []any{o.Port, o.Common.Bind})
	assert.Equal(t, netip.IPv4Unspecified(), o.Server, "the C server listens on every address")

	// The C server's -s: the address it listens on.
	o, err = ParseArgs(Server, []string{"-s", "10.0.0.1", "-p", "9001"})
	require.NoError(t, err)
	assert.Equal(t, netip.MustParseAddr("10.0.0.1"), o.Server)

	for _, tc := range []struct {
		role Role
		args []string
	}{{Server, []string{"-x"}}, {Client, []string{"-p", "0"}}, {Client, []string{"host"}}} {
		_, err := ParseArgs(tc.role, tc.args)
		assert.ErrorIs(t, err, getopt.ErrUsage, "%v %q", tc.role, tc.args)
	}
	_, err = ParseArgs(Client, []string{"-h"})
	require.ErrorIs(t, err, tool.ErrHelp)
}
