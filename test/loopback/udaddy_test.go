package loopback

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUdaddy runs udaddy with two UD endpoints resolved through SIDR: the client SENDs on both
// with its QPN as immediate data, the server answers each message to that QPN; both print the C
// tool's progress lines and status 0.
func TestUdaddy(t *testing.T) {
	srv, cli := LoopbackPair(t)
	server := Start(t, nil, "udaddy", "-b", srv, "-c", "2", "-C", "20", "-S", "1024")
	server.WaitLine("udaddy: starting server", 10*time.Second)
	client := Start(t, nil, "udaddy", "-s", srv, "-b", cli, "-c", "2", "-C", "20", "-S", "1024")
	for _, p := range []*Proc{client, server} {
		require.Zero(t, p.Wait(20*time.Second), "%s\nstdout:\n%s\nstderr:\n%s", p.name, p.Stdout(), p.Stderr())
	}
	assert.Equal(t, []string{"udaddy: starting client", "udaddy: connecting", "initiating data transfers",
		"receiving data transfers", "data transfers complete", "test complete", "return status 0"},
		strings.Split(strings.TrimSpace(client.Stdout()), "\n"))
	assert.Equal(t, []string{"udaddy: starting server", "receiving data transfers", "sending replies",
		"data transfers complete", "test complete", "return status 0"},
		strings.Split(strings.TrimSpace(server.Stdout()), "\n"))
}

// TestUdaddyNoServer: a SIDR_REQ to a device with no UD listener is answered "service ID not
// supported" (status 1), which the client reports as the C tool does.
func TestUdaddyNoServer(t *testing.T) {
	srv, cli := LoopbackPair(t)
	// A ucmatose server runs a device at srv that listens on the TCP port space only.
	server := Start(t, nil, "ucmatose", "-b", srv, "-p", "7174")
	server.WaitLine("cmatose: starting server", 10*time.Second)
	client := Start(t, nil, "udaddy", "-s", srv, "-b", cli)
	require.Equal(t, 1, client.Wait(20*time.Second), "stdout:\n%s\nstderr:\n%s", client.Stdout(), client.Stderr())
	assert.Equal(t, []string{"udaddy: starting client", "udaddy: connecting",
		"udaddy: event: RDMA_CM_EVENT_UNREACHABLE, error: 1", "test complete", "return status 1"},
		strings.Split(strings.TrimSpace(client.Stdout()), "\n"))
	assert.Contains(t, client.Stderr(), "service ID not supported")
}
