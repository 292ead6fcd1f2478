package demo

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
	"github.com/gorxe/gorxe/dump"
	"github.com/gorxe/gorxe/netio"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// run runs the demo between two loopback addresses no other test package uses.
func run(t *testing.T, o Options) string {
	t.Helper()
	var out bytes.Buffer
	err := Run(context.Background(), o, &out)
	require.NoError(t, err, "Run: %v\n%s", err, out.String())
	return out.String()
}

func TestDemoVerifiesEveryStep(t *testing.T) {
	var pcap bytes.Buffer
	out := run(t, Options{A: netip.MustParseAddr("127.30.0.1"), B: netip.MustParseAddr("127.30.0.2"), Pcap: &pcap})
	n := strings.Count(out, "  ✓ ")
	assert.Equal(t, len(steps), n, "%d steps verified, want %d:\n%s", n, len(steps), out)
	for _, want := range []string{
		"RC_SEND_FIRST", "RC_SEND_MIDDLE", "RC_SEND_LAST", "RC_ACKNOWLEDGE", "RC_SEND_ONLY_WITH_IMMEDIATE",
		"RC_RDMA_WRITE_FIRST", "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", "RC_RDMA_READ_REQUEST",
		"RC_RDMA_READ_RESPONSE_FIRST", "RC_RDMA_READ_RESPONSE_LAST", "RC_COMPARE_SWAP", "RC_FETCH_ADD",
		"RC_ATOMIC_ACKNOWLEDGE", "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE", "UD_SEND_ONLY", "All 9 steps verified.",
	} {
		assert.Contains(t, out, want, "the demo shows no %s", want)
	}
	assert.NotContains(t, out, "icrc=BAD", "a clean run shows bad or lost packets:\n%s", out)
	assert.NotContains(t, out, "LOST", "a clean run shows bad or lost packets:\n%s", out)
	// The capture holds every packet the trace showed, and each one's ICRC verifies.
	var capOut, capErr bytes.Buffer
	stats, err := dump.Run(&capOut, &capErr, &pcap, dump.FormatLine)
	require.NoError(t, err, "dumping the demo's capture: %v %s", err, capErr.String())
	require.Equal(t, 0, capErr.Len(), "dumping the demo's capture: %v %s", err, capErr.String())
	shown := strings.Count(out, "icrc=ok")
	assert.Equal(t, shown, strings.Count(capOut.String(), "icrc=ok"), "capture has %d verified packets, the trace showed %d (%+v)", strings.Count(capOut.String(), "icrc=ok"), shown, stats)
	assert.NotEqual(t, 0, shown, "capture has %d verified packets, the trace showed %d (%+v)", strings.Count(capOut.String(), "icrc=ok"), shown, stats)
}

func TestDemoRecoversFromLoss(t *testing.T) {
	faults, err := netio.ParseFaultConfig("loss=0.1,seed=3")
	require.NoError(t, err)
	out := run(t, Options{A: netip.MustParseAddr("127.30.1.1"), B: netip.MustParseAddr("127.30.1.2"), Faults: faults})
	assert.Contains(t, out, "LOST (fault injection)", "with 10%% loss the demo should show losses and still verify every step:\n%s", out)
	assert.Contains(t, out, "All 9 steps verified.", "with 10%% loss the demo should show losses and still verify every step:\n%s", out)
}

// TestDemoInterrupted: a demo whose context has ended stops before its next step, shows the
// counters so far and says how far it got.
func TestDemoInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	err := Run(ctx, Options{A: netip.MustParseAddr("127.30.0.5"), B: netip.MustParseAddr("127.30.0.6")}, &out)
	require.ErrorIs(t, err, tool.ErrInterrupted)
	assert.Equal(t, fmt.Sprintf("interrupted after 0 of %d steps verified", len(steps)), err.Error())
	assert.Contains(t, out.String(), "\nCounters:\n")
	assert.NotContains(t, out.String(), "Step 1:")
}

// TestDemoObserve: -metrics serves while the demo runs and -counters prints both devices'
// counters after it.
func TestDemoObserve(t *testing.T) {
	o := Options{A: netip.MustParseAddr("127.30.2.1"), B: netip.MustParseAddr("127.30.2.2")}
	o.Observe.MetricsAddr, o.Observe.Counters = "127.0.0.1:0", true
	out := run(t, o)
	assert.Regexp(t, `(?m)^metrics: http://127\.0\.0\.1:\d+/metrics$`, out)
	assert.Regexp(t, `(?s)All 9 steps verified\.\n.*counters of gorxe_127\.30\.2\.1:\n  sent_pkts +\d+\n.*counters of gorxe_127\.30\.2\.2:\n  sent_pkts +\d+\n`, out)
}
