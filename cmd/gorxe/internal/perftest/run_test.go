package perftest

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
)

// TestSelection: how each test's device polls the network. The server of a READ or atomic
// latency test, which only serves, polls as long as a bandwidth test's device.
func TestSelection(t *testing.T) {
	for _, tc := range []struct {
		test       Test
		args       string
		busy, recv time.Duration
	}{
		{rlat, "-d gorxe0", responderBusyPoll, 0},
		{alat, "", responderBusyPoll, 0},
		{rlat, "host", tool.LatencyBusyPoll, 0},
		{slat, "", tool.LatencyBusyPoll, 0},
		{wlat, "host", tool.LatencyBusyPoll, 0},
		{rlat, "-e", 0, 0},
		{sbw, "-e host", 0, 0},
		{rbw, "", 0, bandwidthReceivePoll},
		{wbw, "host", 0, bandwidthReceivePoll},
	} {
		name := tc.test.Name() + " " + tc.args
		p, err := ParseArgs(tc.test, strings.Fields(tc.args))
		require.NoError(t, err, name)
		sel := selection(p)
		assert.Equal(t, tc.busy, sel.BusyPoll, name)
		assert.Equal(t, tc.recv, sel.ReceivePoll, name)
		assert.Equal(t, p.Device, sel.Device, name)
	}
}
