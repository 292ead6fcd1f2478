package loopback

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRdmaServerClient runs librdmacm's example pair: one connection, one 16-byte inline SEND each
// way, both disconnect and print their start and end lines.
func TestRdmaServerClient(t *testing.T) {
	srv, cli := LoopbackPair(t)
	port := FreeTCPPort(t)
	server := Start(t, nil, "rdma_server", "-p", port, "--bind", srv)
	server.WaitLine("rdma_server: start", 10*time.Second) // printed once it listens
	client := Start(t, nil, "rdma_client", "-s", srv, "-p", port, "--bind", cli)
	for _, p := range []*Proc{client, server} {
		require.Zero(t, p.Wait(20*time.Second), "%s\nstdout:\n%s\nstderr:\n%s", p.name, p.Stdout(), p.Stderr())
	}
	assert.Equal(t, "rdma_client: start\nrdma_client: end 0\n", client.Stdout())
	assert.Equal(t, "rdma_server: start\nrdma_server: end 0\n", server.Stdout())
}
