package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// host is a network namespace of the test's own with an Ethernet port, gx0 or gx1, the two ends
// of a veth pair: programs on two hosts talk over one link as on two machines, each seeing the
// devices of its own interfaces (lo, its port, others that are up) unless GORXE_ADDR names one. A
// holder process (a shell waiting on its stdin) keeps the namespace; programs join it with
// nsenter.
type host struct {
	pid    int    // the holder's
	netdev string // the port
}

// The two hosts' addresses: the port's MAC gives the link-local address rxe puts at GID index 0
// (fe80::ff:fe00:6701 on gx0), then a global and a second link-local address.
const (
	hostAMAC, hostBMAC = "02:00:00:00:67:01", "02:00:00:00:67:02"
	hostAEUI, hostBEUI = "fe80::ff:fe00:6701", "fe80::ff:fe00:6702"
)

// twoHosts creates two hosts joined by a veth pair: gx0 with fd00:67::1 and fe80::1 on the first,
// gx1 with fd00:67::2 and fe80::2 on the second, both up. The second host has another port before
// gx1, gy1 (up, without carrier) with fd00:68::2: its device comes first in the list, so only the
// routing table tells a program's library that a connection to fd00:67::1 leaves from gx1. It
// skips, saying why, where the test cannot create namespaces (not root, namespaces refused) or
// lacks ip or nsenter.
func twoHosts(t *testing.T) (a, b *host) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("creating network namespaces needs root")
	}
	for _, tool := range []string{"ip", "nsenter"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (iproute2, util-linux)", tool)
		}
	}
	// Addresses are added without duplicate address detection, and the port's own link-local
	// address, which the kernel adds once the link has carrier, skips it too: it appearing is
	// the sign that the link carries traffic.
	port := func(dev, mac, global, ll string) string {
		return fmt.Sprintf(`ip link set %[1]s address %[2]s
echo 0 > /proc/sys/net/ipv6/conf/%[1]s/addr_gen_mode
echo 0 > /proc/sys/net/ipv6/conf/%[1]s/accept_dad
ip addr add %[3]s/64 dev %[1]s nodad
ip addr add %[4]s/64 dev %[1]s nodad
ip link set %[1]s up
`, dev, mac, global, ll)
	}
	b = startHost(t, "gx1", `ip link set lo up
test -d /proc/sys/net/ipv6 || { echo "the kernel has no IPv6" >&2; exit 3; }
ip link add gy1 type veth peer name gy2 || exit 3
ip addr add fd00:68::2/64 dev gy1 nodad
ip link set gy1 up
`)
	a = startHost(t, "gx0", fmt.Sprintf(`ip link set lo up
ip link add gx0 type veth peer name gx1 netns %d || exit 3
%s
nsenter --net=/proc/%d/ns/net sh -e -c '%s'
`, b.pid, port("gx0", hostAMAC, "fd00:67::1", "fe80::1"), b.pid, port("gx1", hostBMAC, "fd00:67::2", "fe80::2")))
	a.waitAddr(t, hostAEUI)
	b.waitAddr(t, hostBEUI)
	return a, b
}

// startHost starts a holder in a new network namespace that runs script (sh -e) and then waits
// for its stdin to close, which the test's cleanup does. A script exiting 3 skips the test: the
// kernel lacks what it needs (veth, IPv6), as its stderr says.
func startHost(t *testing.T, netdev, script string) *host {
	t.Helper()
	cmd := exec.Command("sh", "-e", "-c", script+"echo ready\nexec cat\n")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot create a network namespace: %v", err)
	}
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if line != "ready\n" {
		stdin.Close()
		werr := cmd.Wait()
		var exit *exec.ExitError
		if errors.As(werr, &exit) && exit.ExitCode() == 3 {
			t.Skipf("cannot set up a host in a network namespace: %s", strings.TrimSpace(stderr.String()))
		}
		require.Fail(t, fmt.Sprintf("setting up a network namespace: %v, %v: %s", err, werr, stderr.String()))
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return &host{pid: cmd.Process.Pid, netdev: netdev}
}

// procNet is the host's file of /proc/net.
func (h *host) procNet(name string) string { return "/proc/" + strconv.Itoa(h.pid) + "/net/" + name }

// start runs bin with args on the library in the host, with GORXE_ADDR=addr ("" for every device
// of the host).
func (h *host) start(t *testing.T, addr, bin string, args ...string) *proc {
	t.Helper()
	return start(t, addr, "nsenter", append([]string{"--net=/proc/" + strconv.Itoa(h.pid) + "/ns/net", "--", bin}, args...)...)
}

// waitAddr waits until the host's port has the IPv6 address addr, usable (not tentative), as its
// /proc/net/if_inet6 shows.
func (h *host) waitAddr(t *testing.T, addr string) {
	t.Helper()
	want := ipv6Hex(addr)
	poll(t, fmt.Sprintf("%s has no address %s", h.netdev, addr), nil, func() bool {
		b, err := os.ReadFile(h.procNet("if_inet6"))
		require.NoError(t, err)
		for _, line := range strings.Split(string(b), "\n") {
			// address, ifindex, prefix length, scope, flags (0x40 tentative), name
			f := strings.Fields(line)
			if len(f) == 6 && f[0] == want && f[5] == h.netdev {
				flags, err := strconv.ParseUint(f[4], 16, 8)
				return err == nil && flags&0x40 == 0
			}
		}
		return false
	})
}

// waitBound waits until the server in the host has bound RoCE's UDP port on the IPv6 address
// addr, as the host's /proc/net/udp6 shows (see waitBound).
func (h *host) waitBound(t *testing.T, addr string, server *proc) {
	t.Helper()
	want := udp6Hex(addr) + ":12B7"
	poll(t, fmt.Sprintf("%s has not bound UDP [%s]:4791", server.name, addr), server, func() bool {
		b, err := os.ReadFile(h.procNet("udp6"))
		require.NoError(t, err)
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[1] == want {
				return true
			}
		}
		return false
	})
}

// ipv6Hex is addr as /proc/net/if_inet6 prints it: 32 hex digits in network order.
func ipv6Hex(addr string) string {
	b := netip.MustParseAddr(addr).As16()
	return fmt.Sprintf("%x", b[:])
}

// udp6Hex is addr as /proc/net/udp6 prints it: four 32-bit words, each in host (little-endian)
// order.
func udp6Hex(addr string) string {
	b := netip.MustParseAddr(addr).As16()
	var s strings.Builder
	for i := 0; i < 16; i += 4 {
		fmt.Fprintf(&s, "%02X%02X%02X%02X", b[i+3], b[i+2], b[i+1], b[i])
	}
	return s.String()
}

// poll checks cond every 5 ms until it holds, failing after 10 s with what, or at once when
// server (if any) has exited.
func poll(t *testing.T, what string, server *proc, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	var done chan struct{}
	if server != nil {
		done = server.done
	}
	for !cond() {
		select {
		case <-done:
			require.Fail(t, fmt.Sprintf("%s exited first: %v\nstdout:\n%s\nstderr:\n%s",
				server.name, server.runErr, server.out.String(), server.err.String()))
		case <-deadline:
			require.Fail(t, what+" after 10 s")
		case <-tick.C:
		}
	}
}
