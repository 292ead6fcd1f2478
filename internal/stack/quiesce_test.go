package stack

import (
	"log/slog"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/clock"
	"github.com/gorxe/gorxe/netio"
)

// TestQuiesceWaitsForDrains: Quiesce does not return while any worker's drain (its run lock) is
// under way, so a region deregistered before it is no longer read by a send built from it, and a
// fabric, which takes whole datagrams, gets no payload views.
func TestQuiesceWaitsForDrains(t *testing.T) {
	x := newRig(t, "10.0.0.1")
	for _, w := range x.rt.workers {
		assert.False(t, w.out.Views, "a fabric endpoint takes datagrams whole")
	}
	busy := x.rt.workers[1]
	busy.run.Lock()
	done := make(chan struct{})
	go func() {
		x.rt.Quiesce()
		close(done)
	}()
	select {
	case <-done:
		t.Fatal("Quiesce returned while a drain held its worker")
	default:
	}
	busy.run.Unlock()
	<-done
}

// TestViewsOnUDPSockets: a stack on UDP sockets, which take datagrams in pieces, lets its engines
// send payloads from registered memory.
func TestViewsOnUDPSockets(t *testing.T) {
	// Addresses of their own, so that no other test's socket holds the RoCE port on them.
	conn, err := netio.ListenUDP(netio.UDPConfig{Addrs: []netip.Addr{netip.MustParseAddr("127.0.0.71")}})
	require.NoError(t, err)
	rt := New(Config{Conn: conn, Workers: 2, Clock: clock.Real{}, Log: slog.New(slog.DiscardHandler), Strict: true})
	defer func() { assert.NoError(t, rt.Close()) }()
	for _, w := range rt.workers {
		assert.True(t, w.out.Views)
	}
	conn2, err := netio.ListenUDP(netio.UDPConfig{Addrs: []netip.Addr{netip.MustParseAddr("127.0.0.72")}})
	require.NoError(t, err)
	tapped := New(Config{Conn: netio.Tap(conn2, func(netio.Direction, *netio.Message) {}), Workers: 1,
		Clock: clock.Real{}, Log: slog.New(slog.DiscardHandler), Strict: true})
	assert.False(t, tapped.workers[0].out.Views, "a tap is shown whole datagrams")
	assert.NoError(t, tapped.Close())
}
