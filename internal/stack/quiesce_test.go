package stack

import (
	"log/slog"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

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
	var released atomic.Bool
	done := make(chan bool, 1)
	go func() {
		x.rt.Quiesce()
		done <- released.Load()
	}()
	// A window in which a Quiesce that did not wait would return; one that waits passes however
	// long the machine takes to schedule it.
	assert.Never(t, func() bool { return len(done) > 0 }, 20*time.Millisecond, time.Millisecond,
		"Quiesce returned while a drain held its worker")
	released.Store(true)
	busy.run.Unlock()
	assert.True(t, <-done, "Quiesce returned before the drain ended")
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
