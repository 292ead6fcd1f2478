package main

import (
	"cmp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRDMACMIPv6 runs RDMA-CM programs on the library over IPv6 on two hosts joined by one link
// (see twoHosts), which its subtests share: cm6 checks one host's port and its addresses (see
// cm6Program), the others run the distribution's rping and udaddy as server on one host and
// client on the other over global and link-local addresses, the client's source bound by the
// program or resolved by the library, with every device of the host or the one GORXE_ADDR names.
// The device must be the one that owns the bound or resolved source address, a link-local address
// must be the one of the interface its scope names, and the passive side must take the REQ whose
// header names its address.
func TestRDMACMIPv6(t *testing.T) {
	needLibrary(t)
	a, b := twoHosts(t)
	t.Run("cm6", func(t *testing.T) { cm6Program(t, a) })
	for _, tc := range []struct {
		name               string
		srvEnv, cliEnv     string // GORXE_ADDR
		bound              string // the server's address, as /proc/net/udp6 shows it bound
		tool, clientTool   string // clientTool defaults to tool
		goServer, goClient bool   // gorxe's Go tool in that role
		server, client     []string
	}{
		{name: "rping-global", bound: "fd00:67::1", tool: "rping",
			server: []string{"-s", "-a", "fd00:67::1"}, client: []string{"-c", "-a", "fd00:67::1", "-I", "fd00:67::2"}},
		{name: "rping-global-resolved-source", bound: "fd00:67::1", tool: "rping",
			server: []string{"-s", "-a", "fd00:67::1"}, client: []string{"-c", "-a", "fd00:67::1"}},
		{name: "rping-v6any", bound: "fd00:67::1", tool: "rping",
			server: []string{"-s", "-a", "::"}, client: []string{"-c", "-a", "fd00:67::1", "-I", "fd00:67::2"}},
		{name: "rping-link-local", bound: "fe80::1", tool: "rping",
			server: []string{"-s", "-a", "fe80::1%gx0"}, client: []string{"-c", "-a", "fe80::1%gx1", "-I", "fe80::2%gx1"}},
		{name: "rping-link-local-resolved-source", bound: "fe80::1", tool: "rping",
			server: []string{"-s", "-a", "fe80::1%gx0"}, client: []string{"-c", "-a", "fe80::1%gx1"}},
		// The source's scope names the interface for a peer given without one, as in the kernel.
		{name: "rping-link-local-unscoped-peer", bound: "fe80::1", tool: "rping",
			server: []string{"-s", "-a", "fe80::1%gx0"}, client: []string{"-c", "-a", "fe80::1", "-I", "fe80::2%gx1"}},
		// GORXE_ADDR names one link-local address, with its interface, as the device.
		{name: "rping-link-local-gorxe-addr", srvEnv: "fe80::1%gx0", cliEnv: "fe80::2%gx1", bound: "fe80::1", tool: "rping",
			server: []string{"-s", "-a", "fe80::1%gx0"}, client: []string{"-c", "-a", "fe80::1%gx1", "-I", "fe80::2%gx1"}},
		// rxe's default GID, the link-local address derived from the port's MAC.
		{name: "rping-link-local-eui64", bound: hostAEUI, tool: "rping",
			server: []string{"-s", "-a", hostAEUI + "%gx0"}, client: []string{"-c", "-a", hostAEUI + "%gx1", "-I", hostBEUI + "%gx1"}},
		// gorxe's Go rping against the C one, both ways.
		{name: "rping-link-local-go-server", bound: "fe80::1", tool: "rping", goServer: true,
			server: []string{"-s", "-a", "fe80::1%gx0"}, client: []string{"-c", "-a", "fe80::1%gx1", "-I", "fe80::2%gx1"}},
		{name: "rping-link-local-go-client", bound: "fe80::1", tool: "rping", goClient: true,
			server: []string{"-s", "-a", "fe80::1%gx0"}, client: []string{"-c", "-a", "fe80::1%gx1"}},
		{name: "udaddy-global", bound: "fd00:67::1", tool: "udaddy",
			server: []string{"-b", "fd00:67::1"}, client: []string{"-s", "fd00:67::1", "-b", "fd00:67::2"}},
		{name: "udaddy-link-local", bound: "fe80::1", tool: "udaddy",
			server: []string{"-b", "fe80::1%gx0"}, client: []string{"-s", "fe80::1%gx1", "-b", "fe80::2%gx1"}},
		{name: "ucmatose-global", bound: "fd00:67::1", tool: "ucmatose",
			server: []string{"-b", "fd00:67::1"}, client: []string{"-s", "fd00:67::1", "-b", "fd00:67::2"}},
		{name: "ucmatose-link-local", bound: "fe80::1", tool: "ucmatose",
			server: []string{"-b", "fe80::1%gx0"}, client: []string{"-s", "fe80::1%gx1", "-b", "fe80::2%gx1"}},
		// rdma_getaddrinfo and rdma_create_ep; the client's source is resolved.
		{name: "rdma_server-link-local", bound: "fe80::1", tool: "rdma_server", clientTool: "rdma_client",
			server: []string{"-s", "fe80::1%gx0"}, client: []string{"-s", "fe80::1%gx1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clientTool := cmp.Or(tc.clientTool, tc.tool)
			needLibrary(t, tc.tool, clientTool)
			common := ipv6Common[tc.tool]
			server := append(slices.Clone(common.args), tc.server...)
			client := append(slices.Clone(common.args), tc.client...)
			cmd := func(tool string, goSide bool, args []string) []string {
				if goSide {
					return append(goTool(t, tool), args...)
				}
				return append([]string{tool}, args...)
			}
			sc, cc := cmd(tc.tool, tc.goServer, server), cmd(clientTool, tc.goClient, client)
			srv := a.start(t, tc.srvEnv, sc[0], sc[1:]...)
			a.waitBound(t, tc.bound, srv)
			cli := b.start(t, tc.cliEnv, cc[0], cc[1:]...)
			assert.Contains(t, cli.wait(t), common.clientWant, cli.name)
			assert.Contains(t, srv.wait(t), common.serverWant, srv.name)
		})
	}
}

// ipv6Common is what TestRDMACMIPv6 gives each tool in both roles (the hosts are the test's own:
// any port is free), and what each role prints when it succeeded.
var ipv6Common = map[string]struct {
	args                   []string
	serverWant, clientWant string
}{
	"rping":       {[]string{"-v", "-C", "10", "-p", "7471"}, rpingPair.serverWant, rpingPair.clientWant},
	"udaddy":      {[]string{"-c", "2", "-C", "10"}, udaddyPair.serverWant, udaddyPair.clientWant},
	"ucmatose":    {[]string{"-c", "2", "-C", "10", "-p", "7471"}, ucmatosePair.serverWant, ucmatosePair.clientWant},
	"rdma_server": {[]string{"-p", "7471"}, rdmaServerPair.serverWant, rdmaServerPair.clientWant},
}

// cm6Program lists the GID table of host a's port with the distribution's ibv_devinfo, as rxe
// lays it out (index 0 the link-local address derived from the MAC, then the interface's IPv6
// addresses in the kernel's order, global before link-local), and runs testdata/cm6.c on the
// host with every device of the host: binding a link-local address without a scope (EINVAL),
// with the scope of an interface that lacks it (ENODEV), an address no device has
// (EADDRNOTAVAIL); connections over the port's global address, its link-local one and rxe's
// MAC-derived one, whose device, ids' addresses and scope ids, path record and QP address vector
// (GID and GID index) it checks against that GID table.
func cm6Program(t *testing.T, a *host) {
	needLibrary(t, "ibv_devinfo")
	bin := buildProgram(t, "cm6")
	info := a.start(t, "", "ibv_devinfo", "-v", "-d", "gorxe_gx0").wait(t)
	assert.Contains(t, info, "\t\t\tGID[  0]:\t\tfe80::ff:fe00:6701, RoCE v2\n"+
		"\t\t\tGID[  1]:\t\tfd00:67::1, RoCE v2\n"+
		"\t\t\tGID[  2]:\t\tfe80::1, RoCE v2\n")
	require.Equal(t, "ok\n", a.start(t, "", bin, "gx0", "fd00:67::1", "fe80::1", hostAEUI, "lo").wait(t))
}
