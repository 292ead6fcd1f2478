package rdmacm

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
)

// TestSharedAgentLifetime uses the package-level Listen and Dial: the device's agent starts with
// the first of them, stops once the last connection has left timewait, and starts again for the
// next. Closing a connection that ended first (and took the agent down with it) is not an error.
func TestSharedAgentLifetime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		devs := fabricDevices(t, nil, clientAddr, "10.0.0.2")
		for round := range 2 {
			l, err := Listen(ctx, devs[1], serverAddr, nil)
			require.NoError(t, err, "round %d", round)
			accepted := make(chan *Conn, 1)
			go func() {
				c, err := l.Accept(ctx)
				assert.NoError(t, err, "Accept")
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
	})
}

// TestOpenOnClosedDevice: an agent that cannot create QP1 (here the device is closed) returns the
// error after undoing what it had created, instead of panicking in the cleanup.
func TestOpenOnClosedDevice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dev := fabricDevices(t, nil, "10.0.0.1")[0]
		require.NoError(t, dev.Close())
		a, err := Open(dev, fastCM)
		require.ErrorIs(t, err, gorxe.ErrDeviceClosed)
		require.Nil(t, a)
	})
}
