package loopback

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// linkLocalHost returns an interface's IPv6 link-local address and another of its IPv6
// addresses, which two gorxe devices can bind separately, and the environment that gives the
// tools a private RoCE UDP port; it skips the test when no interface has both addresses.
func linkLocalHost(t *testing.T) (ll, other netip.Addr, env []string) {
	t.Helper()
	ll, other, ok := linkLocalPair()
	if !ok {
		t.Skip("no interface with an IPv6 link-local and another IPv6 address")
	}
	udp, err := net.ListenPacket("udp", ":0")
	require.NoError(t, err)
	defer udp.Close()
	return ll, other, []string{"GORXE_PORT=" + strconv.Itoa(udp.LocalAddr().(*net.UDPAddr).Port)}
}

// linkLocalPair finds an interface that is up with an IPv6 link-local address and another IPv6
// address, which two gorxe devices can bind separately.
func linkLocalPair() (ll, other netip.Addr, ok bool) {
	ifs, err := net.Interfaces()
	if err != nil {
		return ll, other, false
	}
	for _, ifi := range ifs {
		if ifi.Flags&net.FlagUp == 0 || ifi.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifi.Addrs()
		ll, other = netip.Addr{}, netip.Addr{}
		for _, a := range addrs {
			p, isNet := a.(*net.IPNet)
			ip, valid := netip.AddrFromSlice(p.IP)
			if !isNet || !valid || !ip.Is6() || ip.Is4In6() {
				continue
			}
			if ip.IsLinkLocalUnicast() {
				ll = ip.WithZone(ifi.Name)
			} else {
				other = ip
			}
		}
		if ll.IsValid() && other.IsValid() {
			return ll, other, true
		}
	}
	return ll, other, false
}

// TestRCPingpongIPv6LinkLocal runs RoCEv2 over IPv6 between an interface's link-local address
// (GID index 0, as on rxe) and another of its IPv6 addresses, on a private UDP port.
func TestRCPingpongIPv6LinkLocal(t *testing.T) {
	t.Parallel()
	ll, other, env := linkLocalHost(t)
	port := FreeTCPPort(t)
	server := Start(t, env, "rc_pingpong", "--bind", ll.String(), "-g", "0", "-p", port, "-n", "20")
	server.WaitLine("local address:", 10*time.Second)
	client := Start(t, env, "rc_pingpong", "--bind", other.String(), "-g", "1", "-p", port, "-n", "20", "::1")
	for _, p := range []*Proc{client, server} {
		if code := p.Wait(20 * time.Second); code != 0 {
			require.Fail(t, fmt.Sprintf("%s: status %d\n%s%s", p.name, code, p.Stdout(), p.Stderr()))
		}
	}
	sl, _ := parseOutput(t, "server", server.Stdout(), 4096, 20, false)
	cl, _ := parseOutput(t, "client", client.Stdout(), 4096, 20, false)
	if sl[0].gid != ll.WithZone("").String() || cl[0].gid != other.String() {
		assert.Fail(t, fmt.Sprintf("GIDs %s and %s, want %s and %s", sl[0].gid, cl[0].gid, ll.WithZone(""), other))
	}
}
