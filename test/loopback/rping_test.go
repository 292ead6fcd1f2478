package loopback

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pingData is what rping's ping n of size bytes holds, as the client prints it: the prefix, then
// letters from 'A' + n (wrapping after 'z') up to the NUL in the last byte.
func pingData(n, size int) string {
	b := []byte(fmt.Sprintf("rdma-ping-%d: ", n))
	c := byte('A' + n%58)
	for len(b) < size-1 {
		b = append(b, c)
		if c++; c > 'z' {
			c = 'A'
		}
	}
	return string(b)
}

// startRpingServer starts an rping server on addr and waits until it listens.
func startRpingServer(t *testing.T, addr string, args ...string) *Proc {
	t.Helper()
	server := Start(t, nil, append([]string{"rping", "-s", "-d", "-a", addr}, args...)...)
	server.WaitLine("listening on", 10*time.Second)
	return server
}

// linesWith returns the stdout lines of p that start with prefix, without it.
func linesWith(p *Proc, prefix string) []string {
	var got []string
	for _, l := range strings.Split(p.Stdout(), "\n") {
		if s, ok := strings.CutPrefix(l, prefix); ok {
			got = append(got, s)
		}
	}
	return got
}

// TestRping runs rping's loop between two processes over UDP loopback: the RDMA-CM handshake on
// QP1, then READ, SEND and WRITE with the data checked on both sides.
func TestRping(t *testing.T) {
	srv, cli := LoopbackPair(t)
	const pings, size = 5, 100
	server := startRpingServer(t, srv, "-v", "-S", fmt.Sprint(size))
	client := Start(t, nil, "rping", "-c", "-a", srv, "-I", cli, "-C", fmt.Sprint(pings), "-S", fmt.Sprint(size), "-v", "-V")
	for _, p := range []*Proc{client, server} {
		require.Zero(t, p.Wait(20*time.Second), "%s\nstdout:\n%s\nstderr:\n%s", p.name, p.Stdout(), p.Stderr())
	}
	var want []string
	for i := range pings {
		want = append(want, pingData(i, size))
	}
	assert.Equal(t, want, linesWith(client, "ping data: "))
	assert.Equal(t, want, linesWith(server, "server ping data: "))
	assert.Contains(t, server.Stderr(), "server DISCONNECT EVENT...")
	assert.Contains(t, server.Stdout(), "accepted connection from "+cli+":")
}

// TestRpingNoServer checks that a client whose REQ finds no listener fails at once with the
// rejection, in one line.
func TestRpingNoServer(t *testing.T) {
	srv, cli := LoopbackPair(t)
	server := startRpingServer(t, srv, "-p", "7000")
	client := Start(t, nil, "rping", "-c", "-a", srv, "-I", cli, "-p", "7001", "-C", "1")
	require.Equal(t, 1, client.Wait(20*time.Second))
	assert.Contains(t, client.Stderr(), "invalid service ID")
	assert.Equal(t, 1, strings.Count(client.Stderr(), "\n"), client.Stderr())
	server.Interrupt()
	assert.Equal(t, 130, server.Wait(20*time.Second))
}

// TestRpingPersistent serves two clients one after the other with -P, then stops on Ctrl-C.
func TestRpingPersistent(t *testing.T) {
	srv, cli := LoopbackPair(t)
	server := startRpingServer(t, srv, "-P", "-v")
	for range 2 {
		client := Start(t, nil, "rping", "-c", "-a", srv, "-I", cli, "-C", "3", "-V")
		require.Zero(t, client.Wait(20*time.Second), "stderr:\n%s", client.Stderr())
	}
	server.WaitLine("server ping data: rdma-ping-2", 10*time.Second)
	server.Interrupt()
	assert.Equal(t, 130, server.Wait(20*time.Second), "stderr:\n%s", server.Stderr())
	assert.Len(t, linesWith(server, "server ping data: "), 6)
}
