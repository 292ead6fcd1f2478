package rdmacm

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/clock"
	"github.com/gorxe/gorxe/cm"
	"github.com/gorxe/gorxe/cm/mad"
	"github.com/gorxe/gorxe/internal/fabrictest"
	"github.com/gorxe/gorxe/netio"
)

// TestAgentRunsOnDeviceClock: the agent's retransmission timer runs on the device's clock
// (Config.Clock), not on the time of the goroutines: with a fake clock, a REQ nobody answers is
// retransmitted when the clock is stepped past its response timeout, and only then.
func TestAgentRunsOnDeviceClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.NewFake(time.Unix(1_700_000_000, 0))
		fab := netio.NewFabric(netio.FabricConfig{Clock: clk})
		t.Cleanup(fab.Close)
		dev := fabrictest.Devices(t, fab, fabrictest.Options{Config: gorxe.Config{Workers: 2, Clock: clk}}, clientAddr)[0]
		require.Same(t, clk, dev.Clock())
		cfg := fastCM
		cfg.CM.MaxCMRetries = 1
		a, err := Open(dev, cfg)
		require.NoError(t, err)
		defer a.Close()

		dialed := make(chan error, 1)
		go func() {
			_, err := a.Dial(t.Context(), serverAddr, nil) // no device there
			dialed <- err
		}()
		retransmits := func() uint64 {
			synctest.Wait()
			st, err := a.Stats(t.Context())
			require.NoError(t, err)
			return st.CM.Message(mad.AttrREQ).Retransmits
		}
		// The goroutines' time passes, the device's does not.
		time.Sleep(time.Hour)
		require.Zero(t, retransmits())
		// Each step of the device's clock to the next deadline: the REQ's retransmission, then
		// the end of its retries.
		for want := range uint64(2) {
			at, ok := clk.NextDeadline()
			require.True(t, ok, "no timer armed")
			clk.AdvanceTo(at)
			if want == 0 {
				require.Equal(t, uint64(1), retransmits())
			}
		}
		require.ErrorIs(t, <-dialed, cm.ErrTimeout)
	})
}
