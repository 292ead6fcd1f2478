package rdmacm

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSharedAgentLifetime uses the package-level Listen and Dial: the device's agent starts with
// the first of them, stops once the last connection has left timewait, and starts again for the
// next. Closing a connection that ended first (and took the agent down with it) is not an error.
func TestSharedAgentLifetime(t *testing.T) {
	ctx := testCtx(t)
	devs := fabricDevices(t, nil, clientAddr, "10.0.0.2")
	for round := range 2 {
		l, err := Listen(ctx, devs[1], serverAddr, nil)
		require.NoError(t, err, "round %d", round)
		accepted := make(chan *Conn, 1)
		go func() {
			c, err := l.Accept(ctx)
			if err != nil {
				t.Error(err)
			}
			accepted <- c
		}()
		client, err := Dial(ctx, devs[0], serverAddr, nil)
		require.NoError(t, err)
		server := <-accepted
		require.NotNil(t, server)
		require.NoError(t, l.Close())

		require.NoError(t, server.Close())
		<-client.Done()
		<-server.Done()
		require.NoError(t, client.Close())
		require.NoError(t, client.Disconnect(ctx))
	}
}
