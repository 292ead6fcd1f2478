package rdmacm

import (
	"context"
	"net/netip"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIPv6 connects over IPv6 addresses: the network header of received MADs is an IPv6 header
// and the CMA header carries 16-byte addresses.
func TestIPv6(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		as := agents(t, fabricDevices(t, nil, "fd00::1", "fd00::2")...)
		addr := netip.MustParseAddrPort("[fd00::2]:7174")
		l, err := as[1].Listen(ctx, addr, nil)
		require.NoError(t, err)
		defer l.Close()
		client, server := pairOn(t, ctx, as[0], l, nil)
		assert.Equal(t, netip.MustParseAddr("fd00::1"), server.RemoteAddr().Addr())
		assert.Equal(t, client.LocalAddr(), server.RemoteAddr())
		exchange(t, ctx, client, server, "over IPv6")
		closeBoth(t, ctx, client, server)
	})
}

// TestIPv6LinkLocal connects over link-local addresses, which the devices and the programs name
// with their link's zone: the listener takes the REQ whose CMA header names its address (a header
// carries no zone), and each side's addresses keep the zone.
func TestIPv6LinkLocal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		as := agents(t, fabricDevices(t, nil, "fe80::1%link0", "fe80::2%link0")...)
		addr := netip.MustParseAddrPort("[fe80::2%link0]:7174")
		l, err := as[1].Listen(ctx, addr, nil)
		require.NoError(t, err)
		defer l.Close()
		client, server := pairOn(t, ctx, as[0], l, nil)
		assert.Equal(t, netip.MustParseAddr("fe80::1%link0"), client.LocalAddr().Addr())
		assert.Equal(t, addr, client.RemoteAddr())
		assert.Equal(t, addr, server.LocalAddr())
		assert.Equal(t, client.LocalAddr(), server.RemoteAddr())
		exchange(t, ctx, client, server, "over link-local IPv6")
		closeBoth(t, ctx, client, server)
	})
}

// TestSimultaneousDisconnect has both sides disconnect at once: the DREQs cross and each side's
// Disconnect still returns.
func TestSimultaneousDisconnect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		as := twoAgents(t)
		client, server := pair(t, ctx, as, nil, nil)
		var wg sync.WaitGroup
		for _, c := range []*Conn{client, server} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				assert.NoError(t, c.Disconnect(ctx))
			}()
		}
		wg.Wait()
		require.NoError(t, client.Close())
		require.NoError(t, server.Close())
		assert.Contains(t, drain(t, ctx, client), EventTimewaitExit)
		assert.Contains(t, drain(t, ctx, server), EventTimewaitExit)
	})
}

// TestAbandonedRequest: a client gives up before the server accepts; its REJ withdraws the
// request, and the server's next Accept takes the following client instead.
func TestAbandonedRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		as := twoAgents(t)
		l := serverListener(t, ctx, as[1], nil)

		// The first client's Dial ends when its REQ is in the server's backlog (visible in the
		// server's counters), by cancelling its context.
		dctx, cancel := context.WithCancel(ctx)
		dialed := make(chan error, 1)
		go func() {
			_, err := as[0].Dial(dctx, serverAddr, nil)
			dialed <- err
		}()
		synctest.Wait()
		require.Len(t, l.core.backlog, 1)
		cancel()
		require.ErrorIs(t, <-dialed, context.Canceled)
		synctest.Wait()
		st, err := as[1].Stats(ctx)
		require.NoError(t, err)
		require.Equal(t, uint64(2), st.CM.Received, "the REQ and the client's REJ")

		client, server := pairOn(t, ctx, as[0], l, nil)
		exchange(t, ctx, client, server, "second client")
		closeBoth(t, ctx, client, server)
	})
}
