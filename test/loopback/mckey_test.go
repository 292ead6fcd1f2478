package loopback

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMckey runs a receiving mckey with two QPs in an IPv4 group and a sending one: every
// receiving QP gets each of the sender's messages, and both print the C tool's lines.
func TestMckey(t *testing.T) {
	srv, cli := LoopbackPair(t)
	// A group of this test's own: 127.10.N.1 becomes 239.10.N.1.
	group := "239" + strings.TrimPrefix(srv, "127")
	receiver := Start(t, nil, "mckey", "-m", group, "-b", srv, "-c", "2", "-C", "20", "-S", "1000", "--pause", "0")
	awaitJoin(t, receiver, group)
	sender := Start(t, nil, "mckey", "-m", group, "-b", cli, "-s", "-C", "20", "-S", "1000", "--pause", "0")
	for _, p := range []*Proc{sender, receiver} {
		require.Zero(t, p.Wait(20*time.Second), "%s\nstdout:\n%s\nstderr:\n%s", p.name, p.Stdout(), p.Stderr())
	}
	joined := "mckey: joined dgid: ::ffff:" + group + " mlid 0x0 sl 0"
	assert.Equal(t, []string{"mckey: starting client", "mckey: joining", joined, "initiating data transfers",
		"data transfers complete", "test complete", "return status 0"},
		strings.Split(strings.TrimSpace(sender.Stdout()), "\n"))
	assert.Equal(t, []string{"mckey: starting server", "mckey: joining", joined, joined, "receiving data transfers",
		"data transfers complete", "test complete", "return status 0"},
		strings.Split(strings.TrimSpace(receiver.Stdout()), "\n"))
}

// awaitJoin waits for the receiver to have joined and be waiting for messages. If it exits first
// because the kernel refused the IP membership on loopback, the test is skipped.
func awaitJoin(t *testing.T, p *Proc, group string) {
	t.Helper()
	deadline := time.After(procTimeout)
	for {
		p.mu.Lock()
		lines, wake := p.out, p.newOut
		p.mu.Unlock()
		for _, l := range lines {
			if l == "receiving data transfers" {
				return
			}
		}
		select {
		case <-wake:
		case <-p.done:
			if strings.Contains(p.Stderr(), "IP_ADD_MEMBERSHIP") {
				t.Skipf("the kernel refuses to join %s on loopback: %s", group, p.Stderr())
			}
			require.Fail(t, "the receiver exited before joining", "stdout:\n%s\nstderr:\n%s", p.Stdout(), p.Stderr())
		case <-deadline:
			require.Fail(t, "the receiver did not join", "stdout:\n%s\nstderr:\n%s", p.Stdout(), p.Stderr())
		}
	}
}

// TestMckeyIPv6 runs mckey over an IPv6 group between two network namespaces joined by a veth
// pair (loopback routes no IPv6 multicast): the receiver's device joins with MLD, the sender's
// datagrams leave by the interface of its address. Kernel rxe refuses IPv6 groups; gorxe
// follows the address mapping RoCEv2 uses, the group's address as its GID.
func TestMckeyIPv6(t *testing.T) {
	l := newLLLink(t)
	ip6 := [2]string{"fd00:6778::1", "fd00:6778::2"}
	for i := range 2 {
		out, err := exec.Command("ip", "-n", l.ns[i], "-6", "addr", "add", ip6[i]+"/64", "dev", l.dev[i], "nodad").CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	const group = "ff0e::6778"
	receiver := StartIn(t, l.ns[1], nil, "mckey", "-m", group, "-b", ip6[1], "-C", "10", "--pause", "0")
	awaitJoin(t, receiver, group)
	sender := StartIn(t, l.ns[0], nil, "mckey", "-m", group, "-b", ip6[0], "-s", "-C", "10", "--pause", "0")
	for _, p := range []*Proc{sender, receiver} {
		require.Zero(t, p.Wait(20*time.Second), "%s\nstdout:\n%s\nstderr:\n%s", p.name, p.Stdout(), p.Stderr())
	}
	assert.Contains(t, receiver.Stdout(), "mckey: joined dgid: "+group+" mlid 0x0 sl 0\n")
	assert.Contains(t, receiver.Stdout(), "data transfers complete\n")
}
