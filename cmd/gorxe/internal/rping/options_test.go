package rping

import (
	"log/slog"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
)

func TestParseArgs(t *testing.T) {
	o, err := ParseArgs([]string{"-c", "-a", "10.0.0.1", "-I", "10.0.0.2", "-C", "5", "-S", "100", "-vVd", "-p", "9999"})
	require.NoError(t, err)
	assert.Equal(t, Options{Client: true, Addr: netip.MustParseAddr("10.0.0.1"), Source: netip.MustParseAddr("10.0.0.2"),
		Port: 9999, Count: 5, Size: 100, Verbose: true, Validate: true, Debug: true, TOS: -1, Timeout: o.Timeout, Common: tool.NewCommon()}, o)

	o, err = ParseArgs([]string{"-c", "-a", "10.0.0.1", "-t", "0x20", "--pcap", "x.pcapng", "--log-level", "debug", "--bind", "10.0.0.3"})
	require.NoError(t, err)
	assert.Equal(t, 0x20, o.TOS)
	assert.Equal(t, tool.Common{Bind: "10.0.0.3", Pcap: "x.pcapng", LogLevel: slog.LevelDebug}, o.Common)

	o, err = ParseArgs([]string{"-s", "-P"})
	require.NoError(t, err)
	assert.True(t, o.Server && o.Persistent)
	assert.Equal(t, DefaultPort, o.Port)
	assert.Equal(t, DefaultSize, o.Size)

	for _, args := range [][]string{
		{"-s", "-c"},
		{},
		{"-c"},                  // no server address
		{"-s", "-S", "25"},      // below the prefix's room
		{"-s", "-S", "65536"},   // above the buffer
		{"-s", "extra-operand"}, // rping takes none
	} {
		_, err := ParseArgs(args)
		assert.ErrorIs(t, err, getopt.ErrUsage, "%q", args)
	}
	_, err = ParseArgs([]string{"-s", "-S", "25"})
	assert.ErrorContains(t, err, "Invalid size 25 (valid range is 26 to 65536)")
	_, err = ParseArgs([]string{"-h"})
	assert.ErrorIs(t, err, tool.ErrHelp)
}

func TestFillPing(t *testing.T) {
	buf := make([]byte, 30)
	next := fillPing(buf, 0, 'A')
	assert.Equal(t, "rdma-ping-0: ABCDEFGHIJKLMNOP\x00", string(buf))
	assert.Equal(t, byte('B'), next)
	next = fillPing(buf, 7, 'y')
	assert.Equal(t, "rdma-ping-7: yzABCDEFGHIJKLMN\x00", string(buf))
	assert.Equal(t, byte('z'), next)
	assert.Equal(t, byte('A'), fillPing(buf, 8, 'z'))
	assert.Equal(t, "rdma-ping-8: zABCDEFGHIJKLMNO", string(cString(buf)))
}
