package tool

import (
	"context"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm/mad"
	"github.com/gorxe/gorxe/cm/rdmacm"
	"github.com/gorxe/gorxe/internal/fabrictest"
	"github.com/gorxe/gorxe/netio"
)

// TestHangup: a tool's connections end within Linger whatever became of the peer. A peer that is
// there answers the DREQ, and Hangup returns once the connection has left its timewait, having
// counted the DREP; a peer whose device has gone (a killed process sends nothing) never answers,
// and Hangup gives up after Linger rather than waiting out the CM's DREQ retries (about 80 s with
// the default timeouts).
func TestHangup(t *testing.T) {
	tests := []struct {
		name     string
		peerGone bool
		took     time.Duration // exactly, on the bubble's clock (0: less than Linger)
		dreps    uint64        // DREPs received
	}{
		{name: "peer answers", dreps: 1},
		{name: "peer gone", peerGone: true, took: Linger},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				devs, agent, c, peer := connected(t)
				if tc.peerGone {
					require.NoError(t, devs[1].Close())
				} else {
					defer peer.Close()
				}

				start := time.Now()
				require.NoError(t, Hangup(t.Context(), c, nil))
				took := time.Since(start)
				if tc.took != 0 {
					assert.Equal(t, tc.took, took)
				} else {
					assert.Less(t, took, Linger)
					select {
					case <-c.Done():
					default:
						assert.Fail(t, "Hangup returned before the timewait was over")
					}
				}
				stats, err := agent.Stats(t.Context())
				require.NoError(t, err)
				assert.Equal(t, uint64(1), stats.CM.Message(mad.AttrDREQ).Sent)
				assert.Equal(t, tc.dreps, stats.CM.Message(mad.AttrDREP).Received)
				// Closed: the QP is gone.
				assert.ErrorIs(t, c.QP().Modify(&gorxe.QPAttr{State: gorxe.QPStateErr}, gorxe.QPAttrState), gorxe.ErrDestroyed)
				require.NoError(t, devs[0].Close())
				<-c.Done()
			})
		})
	}
}

// TestHangupInterrupted: Ctrl-C ends the wait for a peer that does not answer at once.
func TestHangupInterrupted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		devs, _, c, _ := connected(t)
		require.NoError(t, devs[1].Close())
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start := time.Now()
		require.NoError(t, Hangup(ctx, c))
		assert.Equal(t, time.Second, time.Since(start))
	})
}

// connected returns two devices on an in-memory fabric, a handle on the first's agent with the
// default timeouts (a tool's), and a connection from the first to the second, with its peer.
func connected(t *testing.T) (devs []*gorxe.Device, agent *rdmacm.Agent, c, peer *rdmacm.Conn) {
	t.Helper()
	fab := netio.NewFabric(netio.FabricConfig{})
	t.Cleanup(fab.Close)
	devs = fabrictest.Devices(t, fab, fabrictest.Options{}, "10.9.0.1", "10.9.0.2")
	server := netip.MustParseAddrPort("10.9.0.2:7174")
	l, err := rdmacm.Listen(t.Context(), devs[1], server, nil)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	accepted := make(chan *rdmacm.Conn, 1)
	go func() {
		c, err := l.Accept(t.Context())
		assert.NoError(t, err)
		accepted <- c
	}()
	agent, err = rdmacm.Open(devs[0], rdmacm.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { agent.Close() })
	c, err = agent.Dial(t.Context(), server, nil)
	require.NoError(t, err)
	return devs, agent, c, <-accepted
}
