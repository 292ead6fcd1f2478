package netio

import (
	"net"
	"net/netip"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// opaqueConn is a Conn of a caller's own making, which cannot wait for datagrams.
type opaqueConn struct{ Conn }

// TestWaiter: the waiter of a Conn is the Conn itself, or the one under a Tap or a FaultConn
// (however deep), whose receive sides pass datagrams through; a wrapper of another kind has none.
func TestWaiter(t *testing.T) {
	fab := NewFabric(FabricConfig{})
	defer fab.Close()
	ep, err := fab.NewEndpoint(4791, netip.MustParseAddr("10.0.0.1"))
	require.NoError(t, err)
	faulty, err := WithFaults(ep, FaultConfig{Loss: 0.5}, nil)
	require.NoError(t, err)
	tap := func(c Conn) Conn { return Tap(c, func(Direction, *Message) {}) }

	for name, c := range map[string]Conn{
		"endpoint":          ep,
		"tap":               tap(ep),
		"faults":            faulty,
		"tap over faults":   tap(faulty),
		"tap over tap":      tap(tap(ep)),
		"faults over a tap": mustFaults(t, tap(ep)),
	} {
		w, ok := Waiter(c)
		require.True(t, ok, name)
		assert.Same(t, ep, w.(*Endpoint), name)
	}
	for name, c := range map[string]Conn{
		"opaque":          opaqueConn{ep},
		"tap over opaque": tap(opaqueConn{ep}),
	} {
		_, ok := Waiter(c)
		assert.False(t, ok, name)
	}
}

func mustFaults(t *testing.T, c Conn) *FaultConn {
	f, err := WithFaults(c, FaultConfig{}, nil)
	require.NoError(t, err)
	return f
}

// TestEndpointWaitReadable: WaitReadable blocks while the queue is empty, returns once a
// datagram is queued (leaving it there), and returns net.ErrClosed once the endpoint closes.
func TestEndpointWaitReadable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fab := NewFabric(FabricConfig{})
		defer fab.Close()
		a, b := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")
		ep, err := fab.NewEndpoint(4791, a)
		require.NoError(t, err)
		peer, err := fab.NewEndpoint(4791, b)
		require.NoError(t, err)

		wait := func() chan error {
			done := make(chan error, 1)
			go func() { done <- ep.WaitReadable() }()
			synctest.Wait()
			return done
		}
		done := wait()
		require.Empty(t, done, "returned with nothing queued")
		_, err = peer.Send([]Message{{Buf: []byte("x"), Dst: netip.AddrPortFrom(a, 4791)}})
		require.NoError(t, err)
		synctest.Wait()
		require.NoError(t, <-done)
		require.Equal(t, 1, ep.Queued(), "WaitReadable reads nothing")
		require.NoError(t, ep.WaitReadable(), "a queued datagram is ready at once")

		msgs := []Message{{Buf: make([]byte, 64)}}
		n, err := ep.TryReceive(msgs)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		done = wait()
		require.Empty(t, done, "returned with the queue emptied")
		require.NoError(t, ep.Close())
		synctest.Wait()
		require.ErrorIs(t, <-done, net.ErrClosed)
		require.ErrorIs(t, ep.WaitReadable(), net.ErrClosed)
	})
}
