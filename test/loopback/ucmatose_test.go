package loopback

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUcmatose runs ucmatose with two connections: the server SENDs on both, the client replies,
// the server disconnects; both print the C tool's progress lines and status 0.
func TestUcmatose(t *testing.T) {
	srv, cli := LoopbackPair(t)
	server := Start(t, nil, "ucmatose", "-b", srv, "-c", "2", "-C", "20", "-S", "3000")
	server.WaitLine("cmatose: starting server", 10*time.Second)
	client := Start(t, nil, "ucmatose", "-s", srv, "-b", cli, "-c", "2", "-C", "20", "-S", "3000")
	for _, p := range []*Proc{client, server} {
		require.Zero(t, p.Wait(20*time.Second), "%s\nstdout:\n%s\nstderr:\n%s", p.name, p.Stdout(), p.Stderr())
	}
	assert.Equal(t, []string{"cmatose: starting client", "cmatose: connecting", "receiving data transfers",
		"sending replies", "data transfers complete", "test complete", "return status 0"},
		strings.Split(strings.TrimSpace(client.Stdout()), "\n"))
	assert.Equal(t, []string{"cmatose: starting server", "initiating data transfers", "completing sends",
		"receiving data transfers", "data transfers complete", "cmatose: disconnecting", "disconnected",
		"test complete", "return status 0"},
		strings.Split(strings.TrimSpace(server.Stdout()), "\n"))
}

// TestUcmatoseUDPPortSpace: ucmatose has no UDP port space; -P udp draws the C tool's warning and
// both sides connect in the TCP port space as usual.
func TestUcmatoseUDPPortSpace(t *testing.T) {
	srv, cli := LoopbackPair(t)
	server := Start(t, nil, "ucmatose", "-b", srv, "-C", "2", "-P", "udp")
	server.WaitLine("cmatose: starting server", 10*time.Second)
	client := Start(t, nil, "ucmatose", "-s", srv, "-b", cli, "-C", "2", "-P", "udp")
	for _, p := range []*Proc{client, server} {
		require.Zero(t, p.Wait(20*time.Second), "%s\nstdout:\n%s\nstderr:\n%s", p.name, p.Stdout(), p.Stderr())
		assert.Equal(t, "Warning: unknown port space format\n", p.Stderr(), p.name)
		assert.Contains(t, p.Stdout(), "data transfers complete\n", p.name)
	}
}
