package runtime

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
	"github.com/gorxe/gorxe/packet"
)

// countingConn counts the reads the runtime makes of the connection it wraps.
type countingConn struct {
	netio.Conn
	receives atomic.Int32
	tries    atomic.Int32
}

func (c *countingConn) Receive(msgs []netio.Message) (int, error) {
	c.receives.Add(1)
	return c.Conn.Receive(msgs)
}

func (c *countingConn) TryReceive(msgs []netio.Message) (int, error) {
	c.tries.Add(1)
	return c.Conn.TryReceive(msgs)
}

// TestReceivePoll: after a read, the receive goroutine polls the network when the runtime has a
// ReceivePoll (or BusyPoll) and goes straight back to waiting when it has neither.
func TestReceivePoll(t *testing.T) {
	for _, tc := range []struct {
		name        string
		busy, rx    time.Duration
		wantPolling bool
	}{
		{"neither", 0, 0, false},
		{"ReceivePoll", 0, time.Hour, true},
		{"BusyPoll", time.Hour, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clock.NewFake(time.Unix(1_700_000_000, 0))
			fab := netio.NewFabric(netio.FabricConfig{Clock: clk})
			defer fab.Close()
			ep, err := fab.NewEndpoint(packet.UDPPort, mustAddr("10.0.0.1"))
			require.NoError(t, err)
			conn := &countingConn{Conn: ep}
			rt := New(Config{Conn: conn, Workers: 1, Clock: clk, Log: slog.New(slog.DiscardHandler), Strict: true,
				BusyPoll: tc.busy, ReceivePoll: tc.rx})
			defer func() { assert.NoError(t, rt.Close()) }()

			peer, err := fab.NewEndpoint(packet.UDPPort, mustAddr("10.0.0.2"))
			require.NoError(t, err)
			defer peer.Close()
			// Any datagram will do: the runtime drops this one as malformed after reading it.
			_, err = peer.Send([]netio.Message{{Buf: []byte{1, 2, 3}, Dst: netip.AddrPortFrom(mustAddr("10.0.0.1"), packet.UDPPort)}})
			require.NoError(t, err)

			if tc.wantPolling {
				require.Eventually(t, func() bool { return conn.tries.Load() > 0 }, 10*time.Second, time.Millisecond)
				return
			}
			// The second Receive is the wait after the datagram; nothing polled in between.
			require.Eventually(t, func() bool { return conn.receives.Load() >= 2 }, 10*time.Second, time.Millisecond)
			assert.Zero(t, conn.tries.Load())
		})
	}
}
