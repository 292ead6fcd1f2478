package loopback

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A link of two network namespaces joined by a veth pair: each end is a host of its own, with the
// EUI-64 link-local address a stock kernel gives it, which is also the GID index 0 rxe (and
// gorxe) derive from its MAC. Two gorxe processes there talk link-local GID to link-local GID
// over a real interface, as gorxe and kernel rxe do on a LAN.
type llLink struct {
	ns   [2]string // namespace names
	dev  [2]string // veth end in each
	mac  [2]string
	ip4  [2]string // for the tools' TCP exchange only
	gid0 [2]string // the link-local address derived from mac
}

// newLLLink creates the namespaces (removed when the test ends). It skips without root or ip.
func newLLLink(t *testing.T) *llLink {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create network namespaces")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs the ip command")
	}
	id := fmt.Sprintf("gxll%d", os.Getpid()%100000)
	l := &llLink{
		ns:   [2]string{id + "a", id + "b"},
		dev:  [2]string{"llveth0", "llveth1"},
		mac:  [2]string{"02:67:78:00:00:01", "02:67:78:00:00:02"},
		ip4:  [2]string{"192.0.2.1", "192.0.2.2"},
		gid0: [2]string{"fe80::67:78ff:fe00:1", "fe80::67:78ff:fe00:2"},
	}
	run := func(args ...string) {
		t.Helper()
		out, err := exec.Command("ip", args...).CombinedOutput()
		require.NoError(t, err, "ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	for _, ns := range l.ns {
		exec.Command("ip", "netns", "del", ns).Run() // a killed earlier run's
		run("netns", "add", ns)
		t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
		// No duplicate address detection, so the link-local address is usable at once.
		for _, s := range []string{"net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0"} {
			out, err := exec.Command("ip", "netns", "exec", ns, "sysctl", "-q", "-w", s).CombinedOutput()
			require.NoError(t, err, "sysctl %s: %v\n%s", s, err, out)
		}
		run("-n", ns, "link", "set", "lo", "up")
	}
	run("-n", l.ns[0], "link", "add", l.dev[0], "type", "veth", "peer", "name", l.dev[1], "netns", l.ns[1])
	for i := range 2 {
		// EUI-64 whatever the distribution's default (stable-privacy addresses differ from it).
		run("-n", l.ns[i], "link", "set", l.dev[i], "address", l.mac[i], "addrgenmode", "eui64")
		run("-n", l.ns[i], "addr", "add", l.ip4[i]+"/24", "dev", l.dev[i])
		run("-n", l.ns[i], "link", "set", l.dev[i], "up")
	}
	deadline := time.Now().Add(10 * time.Second)
	for i := range 2 {
		for {
			out, _ := exec.Command("ip", "-n", l.ns[i], "-6", "addr", "show", "dev", l.dev[i], "scope", "link").CombinedOutput()
			if strings.Contains(string(out), l.gid0[i]+"/64") && !strings.Contains(string(out), "tentative") {
				break
			}
			if time.Now().After(deadline) {
				require.Fail(t, fmt.Sprintf("%s in %s has no link-local address %s:\n%s", l.dev[i], l.ns[i], l.gid0[i], out))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return l
}

// TestLinkLocalGIDPeers runs tools between two hosts that both use GID index 0, their IPv6
// link-local addresses, so that every packet travels between two link-local addresses of one
// interface in each direction (the case of gorxe against kernel rxe with -g 0).
func TestLinkLocalGIDPeers(t *testing.T) {
	l := newLLLink(t)
	for _, tc := range []struct {
		name  string
		args  []string
		ready string // what the server prints once it listens
		addrs bool   // whether the tool prints its address lines
	}{
		{"rc_pingpong", []string{"rc_pingpong", "-g", "0", "-n", "20"}, "local address:", true},
		{"ud_pingpong", []string{"ud_pingpong", "-g", "0", "-s", "512", "-n", "20"}, "local address:", true},
		{"write_bw", []string{"write_bw", "-x", "0", "-s", "65536", "-n", "50"}, "Waiting for client to connect", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(slices.Clip(tc.args), "-p", FreeTCPPort(t))
			server := StartIn(t, l.ns[0], nil, slices.Concat(args, []string{"-d", l.dev[0]})...)
			server.WaitLine(tc.ready, 10*time.Second)
			client := StartIn(t, l.ns[1], nil, slices.Concat(args, []string{"-d", l.dev[1], l.ip4[0]})...)
			for _, p := range []*Proc{client, server} {
				if code := p.Wait(25 * time.Second); code != 0 {
					require.Fail(t, fmt.Sprintf("%s: exit status %d\nstdout:\n%s\nstderr:\n%s", p.name, code, p.Stdout(), p.Stderr()))
				}
			}
			if !tc.addrs {
				return
			}
			for i, p := range []*Proc{server, client} {
				local := p.WaitLine("local address:", time.Second)
				remote := p.WaitLine("remote address:", time.Second)
				if !strings.HasSuffix(local, "GID "+l.gid0[i]) || !strings.HasSuffix(remote, "GID "+l.gid0[1-i]) {
					assert.Fail(t, fmt.Sprintf("%s: address lines\n%s\n%s\nwant local GID %s, remote GID %s", p.name, local, remote, l.gid0[i], l.gid0[1-i]))
				}
			}
		})
	}
}
