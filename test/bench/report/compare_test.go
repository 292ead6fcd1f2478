//go:build linux

package main

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testCeiling is a ceiling run with round figures.
func testCeiling() *ceilingReport {
	return &ceilingReport{
		Src: "127.0.0.1", Dst: "127.0.0.2", DurationS: 2,
		Throughput: []ceilingRate{
			{Path: pathMmsg, DatagramBytes: 80, ReceivedPPS: 400e3, ReceivedBytesPerS: 32e6},
			{Path: pathGSO, DatagramBytes: 1040, ReceivedPPS: 2e6, ReceivedBytesPerS: 2080e6},
			{Path: pathGSO, DatagramBytes: 4112, ReceivedPPS: 500e3, ReceivedBytesPerS: 2056e6,
				SenderCPUNSPerDatagram: 300, ReceiverCPUNSPerDatagram: 450},
		},
		PingPong: []ceilingPing{
			{Path: pathMmsg, Wait: "sleep", DatagramBytes: 80, HalfRTTP50NS: 30000, HalfRTTP99NS: 45000},
			{Path: pathMmsg, Wait: waitPoll, DatagramBytes: 80, HalfRTTP50NS: 5000, HalfRTTP99NS: 9000},
		},
	}
}

func TestBandwidthRatioUsesTheMTUsDatagram(t *testing.T) {
	c := benchCase{kind: kindBandwidth, verb: "WRITE", size: 65536, mtu: 4096, qps: 1, target: &targetSpec{targetMinRatio, 0.6}}
	row := bwRow(c, bwResult{Size: 65536, Messages: 1000, BytesPerS: 1285e6}, 2*time.Millisecond, testCeiling())
	require.NotNil(t, row.Compare)
	require.NotNil(t, row.Compare.Ratio)
	assert.InDelta(t, 0.625, *row.Compare.Ratio, 1e-9)
	assert.Equal(t, "GSO+GRO, 4112 B datagrams", row.Compare.Ceiling)
	assert.Equal(t, &Target{Text: "≥ 0.6× ceiling", Met: true}, row.Target)
	assert.Equal(t, unitBytesPerS, row.Unit)
	assert.InDelta(t, 2000.0, row.CPUPerMsgNS, 1e-9)

	c.mtu = 1024
	row = bwRow(c, bwResult{Messages: 1000, BytesPerS: 1040e6}, 0, testCeiling())
	assert.InDelta(t, 0.5, *row.Compare.Ratio, 1e-9)
	assert.Equal(t, "GSO+GRO, 1040 B datagrams", row.Compare.Ceiling)
	assert.False(t, row.Target.Met)
	assert.Zero(t, row.CPUPerMsgNS)
}

func TestSendRateAgainstSendmmsgAndAbsoluteTarget(t *testing.T) {
	c := benchCase{kind: kindRate, verb: "SEND", size: 64, qps: 1, target: &targetSpec{targetMinValue, 1e6}}
	row := bwRow(c, bwResult{Size: 64, Messages: 500, MsgsPerS: 300e3, BytesPerS: 19.2e6}, time.Millisecond, testCeiling())
	assert.Equal(t, unitMsgsPerS, row.Unit)
	assert.InDelta(t, 300e3, row.Value, 1e-9)
	assert.InDelta(t, 0.75, *row.Compare.Ratio, 1e-9)
	assert.Equal(t, "sendmmsg, 80 B datagrams", row.Compare.Ceiling)
	assert.Equal(t, &Target{Text: "≥ 1 M msg/s", Met: false}, row.Target)

	row = bwRow(c, bwResult{MsgsPerS: 1.2e6}, 0, nil)
	assert.Nil(t, row.Compare, "no ceiling, no comparison")
	assert.True(t, row.Target.Met, "an absolute target needs no ceiling")
}

func TestLatencyRowsAreDifferences(t *testing.T) {
	c := benchCase{kind: kindLatency, verb: "SEND", size: 64, qps: 1, target: &targetSpec{targetMaxDiff, 2000}}
	rows := latRows(c, latResult{Iterations: 1000, TypicalUS: 6.5, P99US: 20}, 10*time.Millisecond, testCeiling())
	require.Len(t, rows, 2)
	p50, p99 := rows[0], rows[1]
	assert.Equal(t, "send_lat-64-p50", p50.ID)
	assert.Equal(t, "RC SEND 64 B half RTT p50", p50.Label)
	assert.InDelta(t, 6500.0, p50.Value, 1e-9)
	assert.InDelta(t, 1500.0, *p50.Compare.DiffNS, 1e-9)
	assert.Nil(t, p50.Compare.Ratio)
	assert.Equal(t, &Target{Text: "≤ UDP + 2 µs", Met: true}, p50.Target)
	assert.InDelta(t, 10000.0, p50.CPUPerMsgNS, 1e-9)

	assert.InDelta(t, 11000.0, *p99.Compare.DiffNS, 1e-9)
	assert.Nil(t, p99.Target, "no tail target set")

	// The tail target: gorxe's p99 no worse than the polled UDP ping-pong's of the same run.
	c.tailTarget = &targetSpec{targetMaxDiff, 0}
	p99 = latRows(c, latResult{Iterations: 1000, TypicalUS: 6.5, P99US: 20}, 0, testCeiling())[1]
	assert.Equal(t, &Target{Text: "≤ UDP", Met: false}, p99.Target)
	p99 = latRows(c, latResult{Iterations: 1000, TypicalUS: 6.5, P99US: 9}, 0, testCeiling())[1]
	assert.Equal(t, &Target{Text: "≤ UDP", Met: true}, p99.Target, "equal to UDP meets it")
	assert.Equal(t, "send_lat-64-p99", p99.ID)
}

func TestFastByDefault(t *testing.T) {
	ceil := testCeiling()
	write := benchCase{kind: kindBandwidth, verb: "WRITE", size: 65536, mtu: 4096, qps: 1, target: &targetSpec{targetMinRatio, 0.6}}
	rate := benchCase{kind: kindRate, verb: "SEND", size: 64, qps: 1}
	lat := benchCase{kind: kindLatency, verb: "SEND", size: 64, qps: 1}
	rows := []Row{
		bwRow(write, bwResult{Messages: 10, BytesPerS: 1000e6}, 0, ceil),
		bwRow(write.atDefault(), bwResult{Messages: 10, BytesPerS: 850e6}, 0, ceil),
		bwRow(rate, bwResult{Messages: 10, MsgsPerS: 1e6}, 0, ceil),
		bwRow(rate.atDefault(), bwResult{Messages: 10, MsgsPerS: 0.95e6}, 0, ceil),
	}
	rows = append(rows, latRows(lat, latResult{Iterations: 10, TypicalUS: 10, P99US: 40}, 0, ceil)...)
	rows = append(rows, latRows(lat.atDefault(), latResult{Iterations: 10, TypicalUS: 10.5, P99US: 50}, 0, ceil)...)
	rows = append(rows, failedRows(benchCase{kind: kindBandwidth, verb: "READ", size: 65536, mtu: 4096, qps: 1}, errors.New("x"))...)
	rows = append(rows, bwRow(benchCase{kind: kindBandwidth, verb: "READ", size: 65536, mtu: 4096, qps: 1, defaultProcs: true},
		bwResult{Messages: 10, BytesPerS: 1e9}, 0, ceil))
	fastByDefault(rows)

	speed := map[string]float64{}
	met := map[string]bool{}
	for _, r := range rows {
		if !r.DefaultProcs {
			assert.Nil(t, r.VsPinned, r.ID)
			continue
		}
		if r.VsPinned != nil {
			speed[r.ID] = *r.VsPinned
			require.NotNil(t, r.Target, r.ID)
			assert.Equal(t, "≥ 0.9× pinned", r.Target.Text)
			met[r.ID] = r.Target.Met
		}
	}
	assert.InDeltaMapValues(t, map[string]float64{
		"write_bw-65536-mtu4096-q1-default": 0.85,
		"send_bw-64-q1-default":             0.95,
		"send_lat-64-default-p50":           10.0 / 10.5, // a time: pinned ÷ default
		"send_lat-64-default-p99":           0.8,
	}, speed, 1e-9, "the READ default row has no pinned figure to compare with")
	assert.Equal(t, map[string]bool{"write_bw-65536-mtu4096-q1-default": false, "send_bw-64-q1-default": true,
		"send_lat-64-default-p50": true, "send_lat-64-default-p99": false}, met)
	assert.Equal(t, &Target{Text: "≥ 0.6× ceiling", Met: false}, rows[0].Target, "the pinned row keeps its own target")
	assert.NotNil(t, rows[1].Compare, "a default row is still set against the ceiling")
}

func TestReadLatencyIsHalved(t *testing.T) {
	c := benchCase{kind: kindLatency, verb: "READ", size: 64, qps: 1}
	rows := latRows(c, latResult{Iterations: 10, TypicalUS: 16, P99US: 30}, 0, testCeiling())
	assert.InDelta(t, 8000.0, rows[0].Value, 1e-9)
	assert.InDelta(t, 3000.0, *rows[0].Compare.DiffNS, 1e-9)
	assert.InDelta(t, 15000.0, rows[1].Value, 1e-9)
	assert.Contains(t, rows[0].Label, "round trip ÷ 2")
}

func TestMissingCeilingMissesRelativeTargets(t *testing.T) {
	c := benchCase{kind: kindLatency, verb: "SEND", size: 64, qps: 1, target: &targetSpec{targetMaxDiff, 2000}}
	rows := latRows(c, latResult{TypicalUS: 1}, 0, &ceilingReport{})
	assert.Nil(t, rows[0].Compare)
	assert.False(t, rows[0].Target.Met)

	w := benchCase{kind: kindBandwidth, verb: "READ", size: 65536, mtu: 4096, qps: 1, target: &targetSpec{targetMinRatio, 0.5}}
	row := bwRow(w, bwResult{BytesPerS: 1e12}, 0, nil)
	assert.False(t, row.Target.Met)
}

func TestFailedRows(t *testing.T) {
	err := errors.New("server exited")
	bw := failedRows(benchCase{kind: kindRate, verb: "SEND", size: 64, qps: 16}, err)
	require.Len(t, bw, 1)
	assert.Equal(t, Row{ID: "send_bw-64-q16", Label: "RC SEND 64 B message rate, 16 QPs", Tool: "send_bw",
		Unit: unitMsgsPerS, Error: "server exited"}, bw[0])

	lat := failedRows(benchCase{kind: kindLatency, verb: "WRITE", size: 64, qps: 1}, err)
	require.Len(t, lat, 2)
	assert.Equal(t, "write_lat-64-p99", lat[1].ID)
	assert.Equal(t, unitNS, lat[1].Unit)
}

func TestSizeText(t *testing.T) {
	for n, want := range map[int]string{64: "64 B", 4096: "4 KiB", 65536: "64 KiB", 1 << 20: "1 MiB", 1500: "1500 B", 3 << 20: "3 MiB"} {
		assert.Equal(t, want, sizeText(n), n)
	}
}

// Each C row is set against the pinned Go row of the same measurement: rates as C ÷ Go, times
// as C − Go, judged by the targets; the p99 difference is shown without a target.
func TestCompareWithGo(t *testing.T) {
	ceil := testCeiling()
	write := benchCase{kind: kindBandwidth, verb: "WRITE", size: 65536, mtu: 4096, qps: 1}
	rate := benchCase{kind: kindRate, verb: "SEND", size: 64, qps: 1}
	lat := benchCase{kind: kindLatency, verb: "SEND", size: 64, qps: 1}
	rows := []Row{
		bwRow(write, bwResult{Messages: 10, BytesPerS: 1000e6}, 0, ceil),
		bwRow(write.atDefault(), bwResult{Messages: 10, BytesPerS: 2000e6}, 0, ceil),
		bwRow(write.inC(), bwResult{Messages: 10, BytesPerS: 950e6}, 0, ceil),
		bwRow(rate, bwResult{Messages: 10, MsgsPerS: 400e3}, 0, ceil),
		bwRow(rate.inC(), bwResult{Messages: 10, MsgsPerS: 300e3}, 0, ceil),
	}
	rows = append(rows, latRows(lat, latResult{Iterations: 10, TypicalUS: 10, P99US: 20}, 0, ceil)...)
	rows = append(rows, latRows(lat.inC(), latResult{Iterations: 10, TypicalUS: 10.5, P99US: 30}, 0, ceil)...)
	compareWithGo(rows)

	w := rows[2]
	require.NotNil(t, w.VsGo)
	assert.InDelta(t, 0.95, *w.VsGo.Ratio, 1e-9, "against the pinned Go row, not the default one")
	assert.Equal(t, "gorxe write_bw", w.VsGo.Ceiling)
	assert.Equal(t, &Target{Text: "≥ 0.9× Go", Met: true}, w.Target)
	require.NotNil(t, w.Compare, "the C row keeps its ceiling")
	assert.InDelta(t, 950e6/2056e6, *w.Compare.Ratio, 1e-9)

	assert.InDelta(t, 0.75, *rows[4].VsGo.Ratio, 1e-9)
	assert.Equal(t, &Target{Text: "≥ 0.8× Go", Met: false}, rows[4].Target)

	p50, p99 := rows[7], rows[8]
	assert.InDelta(t, 500.0, *p50.VsGo.DiffNS, 1e-9)
	assert.Equal(t, &Target{Text: "≤ Go + 1 µs", Met: true}, p50.Target)
	assert.InDelta(t, 10000.0, *p99.VsGo.DiffNS, 1e-9)
	assert.Nil(t, p99.Target)

	for _, r := range rows {
		if !r.CPerftest {
			assert.Nil(t, r.VsGo, r.ID)
		}
	}
}

// A C row whose Go row failed has nothing to compare with and misses its target; a skipped C
// row is left alone.
func TestCompareWithGoWithoutGoRow(t *testing.T) {
	rate := benchCase{kind: kindRate, verb: "SEND", size: 64, qps: 1}
	rows := append(failedRows(rate, errors.New("refused")), bwRow(rate.inC(), bwResult{Messages: 10, MsgsPerS: 300e3}, 0, nil))
	rows = append(rows, skippedRows(benchCase{kind: kindLatency, verb: "SEND", size: 64, qps: 1}.inC(), "ib_send_lat is not installed (perftest)")...)
	compareWithGo(rows)
	assert.Nil(t, rows[1].VsGo)
	assert.Equal(t, &Target{Text: "≥ 0.8× Go", Met: false}, rows[1].Target)
	for _, r := range rows[2:] {
		assert.Nil(t, r.Target)
		assert.Empty(t, r.Error)
		assert.Equal(t, "ib_send_lat is not installed (perftest)", r.Skipped)
	}
	assert.Equal(t, []string{"ib_send_lat-64-p50", "ib_send_lat-64-p99"}, []string{rows[2].ID, rows[3].ID})
}
