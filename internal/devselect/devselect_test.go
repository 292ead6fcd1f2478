package devselect

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestSelectionConfig(t *testing.T) {
	tests := []struct {
		name string
		sel  Selection
		env  func(string) string
		want gorxe.Config
	}{
		{"bind", Selection{Bind: "127.0.0.9"}, env(), gorxe.Config{Addr: netip.MustParseAddr("127.0.0.9")}},
		{"bind wins over -d", Selection{Bind: "127.0.0.9", Device: "lo"}, env(), gorxe.Config{Addr: netip.MustParseAddr("127.0.0.9")}},
		{"bind bracketed v6", Selection{Bind: "[::1]"}, env(), gorxe.Config{Addr: netip.MustParseAddr("::1")}},
		{"-d interface", Selection{Device: "lo"}, env(), gorxe.Config{Interface: "lo"}},
		{"-d device name", Selection{Device: "gorxe_lo"}, env(), gorxe.Config{Interface: "lo"}},
		{"-d address", Selection{Device: "127.10.0.1"}, env(), gorxe.Config{Addr: netip.MustParseAddr("127.10.0.1")}},
		{"-d device name of address", Selection{Device: "gorxe_127.10.0.1"}, env(), gorxe.Config{Addr: netip.MustParseAddr("127.10.0.1")}},
		{"-d mapped address", Selection{Device: "::ffff:127.0.0.1"}, env(), gorxe.Config{Addr: netip.MustParseAddr("127.0.0.1")}},
		{"-d wins over env", Selection{Device: "lo"}, env(EnvAddr, "127.0.0.3"), gorxe.Config{Interface: "lo"}},
		{"env address", Selection{}, env(EnvAddr, "127.0.0.3"), gorxe.Config{Addr: netip.MustParseAddr("127.0.0.3")}},
		{"env interface", Selection{}, env(EnvAddr, "lo"), gorxe.Config{Interface: "lo"}},
		{"port", Selection{Bind: "127.0.0.1"}, env(EnvPort, "14791"), gorxe.Config{Addr: netip.MustParseAddr("127.0.0.1"), Port: 14791}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.sel.Config(tc.env)
			require.NoError(t, err)
			require.Equal(t, tc.want.Addr, got.Addr, "Config = {Addr %v Interface %q Port %d}, want {Addr %v Interface %q Port %d}", got.Addr, got.Interface, got.Port, tc.want.Addr, tc.want.Interface, tc.want.Port)
			require.Equal(t, tc.want.Interface, got.Interface, "Config = {Addr %v Interface %q Port %d}, want {Addr %v Interface %q Port %d}", got.Addr, got.Interface, got.Port, tc.want.Addr, tc.want.Interface, tc.want.Port)
			require.Equal(t, tc.want.Port, got.Port, "Config = {Addr %v Interface %q Port %d}, want {Addr %v Interface %q Port %d}", got.Addr, got.Interface, got.Port, tc.want.Addr, tc.want.Interface, tc.want.Port)
		})
	}
}

func TestSelectionConfigErrors(t *testing.T) {
	tests := []struct {
		name    string
		sel     Selection
		env     func(string) string
		is      error
		message string
	}{
		{"unknown device", Selection{Device: "rxe0x"}, env(), ErrDeviceNotFound, "IB device rxe0x not found"},
		{"unknown env device", Selection{}, env(EnvAddr, "nosuch9"), ErrDeviceNotFound, "GORXE_ADDR: IB device nosuch9 not found"},
		{"bind not an address", Selection{Bind: "lo"}, env(), nil, "--bind lo: not an IP address"},
		{"bad port", Selection{Bind: "127.0.0.1"}, env(EnvPort, "70000"), nil, `GORXE_PORT="70000" is not a UDP port number`},
		{"zero port", Selection{Bind: "127.0.0.1"}, env(EnvPort, "0"), nil, `GORXE_PORT="0"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.sel.Config(tc.env)
			require.Error(t, err, "no error")
			assert.False(t, tc.is != nil && !errors.Is(err, tc.is), "error %v does not match %v", err, tc.is)
			assert.True(t, strings.HasPrefix(err.Error(), tc.message), "error %q, want one line starting %q", err, tc.message)
			assert.NotContains(t, err.Error(), "\n", "error %q, want one line starting %q", err, tc.message)
		})
	}
}

func TestSelectionDefault(t *testing.T) {
	cfg, err := Selection{}.Config(env())
	require.NoError(t, err)
	switch {
	case cfg.Interface != "":
		require.NotEqual(t, "lo", cfg.Interface, "default picked the loopback interface")
	case cfg.Addr != netip.MustParseAddr("127.0.0.1"):
		require.Fail(t, fmt.Sprintf("default = %+v, want an interface or 127.0.0.1", cfg))
	}
}

// TestOpenAddressInUse holds the UDP port a tool's device wants and checks that opening it says
// how to get another address: a second tool on one host without --bind lands here.
func TestOpenAddressInUse(t *testing.T) {
	held, err := net.ListenPacket("udp4", "127.0.0.1:0")
	require.NoError(t, err)
	defer held.Close()
	port := strconv.Itoa(held.LocalAddr().(*net.UDPAddr).Port)

	cfg, err := Selection{Bind: "127.0.0.1"}.Config(env(EnvPort, port))
	require.NoError(t, err)
	dev, err := Open(cfg)
	if dev != nil {
		dev.Close()
	}
	require.ErrorIs(t, err, syscall.EADDRINUSE)
	assert.Contains(t, err.Error(), "bind: address already in use (UDP port "+port+" of that address is taken, by another gorxe tool or another RoCE stack on this host: give each tool its own address with --bind ADDR (on one host, e.g. --bind 127.0.0.1 and --bind 127.0.0.2))")
	assert.NotContains(t, err.Error(), "\n")
}

func TestExplainInUse(t *testing.T) {
	other := errors.New("permission denied")
	assert.Same(t, other, ExplainInUse(other, 0, "fix"), "other errors pass unchanged")
	err := ExplainInUse(fmt.Errorf("listen: %w", syscall.EADDRINUSE), 0, "use -a and -b")
	require.ErrorIs(t, err, syscall.EADDRINUSE)
	assert.Equal(t, "listen: address already in use (UDP port 4791 of that address is taken, by another gorxe tool or another RoCE stack on this host: use -a and -b)", err.Error())
}

func TestDeviceName(t *testing.T) {
	for _, tc := range []struct {
		cfg  gorxe.Config
		want string
	}{
		{gorxe.Config{Name: "mine", Interface: "eth0"}, "mine"},
		{gorxe.Config{Interface: "eth0", Addr: netip.MustParseAddr("10.0.0.1")}, "gorxe_eth0"},
		{gorxe.Config{Addr: netip.MustParseAddr("fe80::1%eth0")}, "gorxe_fe80::1"},
	} {
		assert.Equal(t, tc.want, DeviceName(tc.cfg))
	}
}

// TestOpenUnboundBesidePortHolder opens a device whose UDP port another socket holds: it answers
// queries all the same, with the GID table of its address.
func TestOpenUnboundBesidePortHolder(t *testing.T) {
	held, err := net.ListenPacket("udp4", "127.0.0.1:0")
	require.NoError(t, err)
	defer held.Close()
	port := uint16(held.LocalAddr().(*net.UDPAddr).Port)

	dev, err := OpenUnbound(gorxe.Config{Addr: netip.MustParseAddr("127.0.0.1"), Port: port})
	require.NoError(t, err)
	defer dev.Close()
	gid, err := dev.QueryGID(1)
	require.NoError(t, err)
	assert.Equal(t, gorxe.GIDFromAddr(netip.MustParseAddr("127.0.0.1")), gid)
	assert.Equal(t, "gorxe_127.0.0.1", dev.Name())
}

func TestDeviceNamesAreInterfaces(t *testing.T) {
	ifs := Interfaces()
	names := DeviceNames()
	require.Len(t, names, len(ifs))
	for i, n := range ifs {
		assert.Equal(t, DeviceNamePrefix+n, names[i])
		ifi, err := net.InterfaceByName(n)
		require.NoError(t, err)
		assert.NotZero(t, ifi.Flags&net.FlagUp, "%s is listed but down", n)
	}
}

// TestConfigs: GORXE_ADDR names the one device; without it there is one per interface that is up
// and has an address, in the kernel's order; a GORXE_ADDR that names nothing is an error.
func TestConfigs(t *testing.T) {
	cfgs, err := Configs(env(EnvAddr, "127.0.0.9"))
	require.NoError(t, err)
	assert.Equal(t, []gorxe.Config{{Addr: netip.MustParseAddr("127.0.0.9")}}, cfgs)

	cfgs, err = Configs(env(EnvAddr, "gorxe_lo"))
	require.NoError(t, err)
	assert.Equal(t, []gorxe.Config{{Interface: "lo"}}, cfgs)

	cfgs, err = Configs(env())
	require.NoError(t, err)
	var want []gorxe.Config
	for _, n := range Interfaces() {
		want = append(want, gorxe.Config{Interface: n})
	}
	assert.Equal(t, want, cfgs)

	_, err = Configs(env(EnvAddr, "nosuch0"))
	assert.EqualError(t, err, "GORXE_ADDR: IB device nosuch0 not found: IB device not found")
}
