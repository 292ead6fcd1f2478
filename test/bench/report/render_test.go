//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testReport has one row of every kind: a ratio with per-process costs, a difference, a
// failure and a memory figure, and the first two measured at the default GOMAXPROCS too.
func testReport() *Report {
	ceil := testCeiling()
	write := benchCase{kind: kindBandwidth, verb: "WRITE", size: 65536, mtu: 4096, qps: 1, target: &targetSpec{targetMinRatio, 0.6}}
	lat := benchCase{kind: kindLatency, verb: "SEND", size: 64, qps: 1, target: &targetSpec{targetMaxDiff, 2000},
		tailTarget: &targetSpec{targetMaxDiff, 0}}
	calls, empty := 1.25, 0.75
	pinned := bwRow(write, bwResult{Messages: 10, BytesPerS: 1028e6}, 50*time.Microsecond, ceil)
	pinned.Client = &ProcessCost{ContextSwitches: 0.5, VoluntarySwitches: 0.25, SystemCalls: &calls, EmptyReceives: &empty}
	pinned.Server = &ProcessCost{ContextSwitches: 0.125, VoluntarySwitches: 0.125}
	def := bwRow(write.atDefault(), bwResult{Messages: 10, BytesPerS: 514e6}, 100*time.Microsecond, ceil)
	def.Client = &ProcessCost{ContextSwitches: 2, VoluntarySwitches: 1.5, SystemCalls: &calls, EmptyReceives: &empty}
	def.Server = &ProcessCost{ContextSwitches: 3, VoluntarySwitches: 3, SystemCalls: &calls, EmptyReceives: &empty}
	rows := []Row{pinned, def}
	rows = append(rows, latRows(lat, latResult{Iterations: 100, TypicalUS: 6.25, P99US: 12.5}, 0, ceil)...)
	rows = append(rows, latRows(lat.atDefault(), latResult{Iterations: 100, TypicalUS: 6.25, P99US: 25}, 0, ceil)...)
	rows = append(rows, failedRows(benchCase{kind: kindRate, verb: "SEND", size: 64, qps: 1024}, assertErr("exited | status 1\nagain"))...)
	rows = append(rows, failedRows(benchCase{kind: kindRate, verb: "SEND", size: 64, qps: 1, defaultProcs: true}, assertErr("refused"))...)
	rows = append(rows, Row{ID: "idle-qp-rss", Label: "resident memory per idle RC QP (8 connected pairs)", Unit: unitBytes, Value: 6144})
	fastByDefault(rows)
	return &Report{
		Machine:  Machine{Cores: 2, CPU: "Test CPU", Kernel: "6.1.0", GoVersion: "go1.26.8", LoadAvg: "1.00 2.00 3.00", Date: "2026-01-02T03:04:05Z"},
		Settings: Settings{DurationS: 2, LatencyIters: 100, ClientAddr: "127.0.0.1", ServerAddr: "127.0.0.2", GoMaxProcs: 1},
		Ceiling:  ceil,
		Rows:     rows,
	}
}

type assertErr string

func (e assertErr) Error() string { return string(e) }

func TestMarkdown(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, testReport().writeMarkdown(&b))
	md := b.String()
	assert.True(t, strings.HasPrefix(md, "Measured 2026-01-02T03:04:05Z on 2 cores (Test CPU), Linux 6.1.0, go1.26.8; load average 1.00 2.00 3.00 at the start."), md)
	for _, want := range []string{
		"gorxe client on 127.0.0.1 and server on 127.0.0.2 as two processes (GOMAXPROCS=1 each), 2 s measured per bandwidth run (after 1 s of warm-up), 100 iterations per latency run.",
		"| measurement | gorxe | UDP ceiling (same run) | gorxe vs ceiling | target | CPU per message | " +
			"system calls per message, client / server (of which empty receives) | context switches per message, client / server |\n",
		"| RC WRITE 64 KiB, MTU 4096 | 1028 MB/s | 2056 MB/s (GSO+GRO, 4112 B datagrams) | 0.50× | ≥ 0.6× ceiling ✗ | 5.00 µs " +
			"| 1.250 (0.750) / — | 0.500 / 0.125 |\n",
		"| RC SEND 64 B half RTT p50 | 6.25 µs | 5.00 µs (polled UDP ping-pong p50) | +1.25 µs | ≤ UDP + 2 µs ✓ |  |  |  |\n",
		"| RC SEND 64 B half RTT p99 | 12.50 µs | 9.00 µs (polled UDP ping-pong p99) | +3.50 µs | ≤ UDP ✗ |  |  |  |\n",
		"| RC SEND 64 B message rate, 1024 QPs | failed: exited / status 1 again | — | — |  |  |  |  |\n",
		"| resident memory per idle RC QP (8 connected pairs) | 6.0 KiB | — | — |  |  |  |  |\n",
		"\n\nThe headline figures again with the tools started as a user starts them, with no GOMAXPROCS in their environment " +
			"(the runtime's default), each run right after the same one pinned (GOMAXPROCS=1 each). Speed vs pinned is " +
			"default ÷ pinned for rates and pinned ÷ default for times; the other columns are the default run's.\n\n" +
			"| measurement | GOMAXPROCS=1 each | default GOMAXPROCS | speed vs pinned | target | default vs ceiling | CPU per message | " +
			"system calls per message, client / server (of which empty receives) | context switches per message, client / server |\n" +
			"|---|---:|---:|---:|---|---:|---:|---:|---:|\n" +
			"| RC WRITE 64 KiB, MTU 4096 | 1028 MB/s | 514 MB/s | 0.50× | ≥ 0.9× pinned ✗ | 0.25× | 10.00 µs " +
			"| 1.250 (0.750) / 1.250 (0.750) | 2.000 / 3.000 |\n" +
			"| RC SEND 64 B half RTT p50 | 6.25 µs | 6.25 µs | 1.00× | ≥ 0.9× pinned ✓ | +1.25 µs |  |  |  |\n" +
			"| RC SEND 64 B half RTT p99 | 12.50 µs | 25.00 µs | 0.50× | ≥ 0.9× pinned ✗ | +16.00 µs |  |  |  |\n" +
			"| RC SEND 64 B message rate | — | failed: refused | — |  | — |  |  |  |\n\n",
		"| sendmmsg/recvmmsg | 80 B | 0.400 Mpps | 32 MB/s | 0.0% | 0.00 µs |\n",
		"| UDP_SEGMENT + UDP_GRO | 4112 B | 0.500 Mpps | 2056 MB/s | 0.0% | 0.75 µs |\n",
		"| sendmmsg/recvmmsg | sleep in recvmmsg | 80 B | 30.00 µs | 45.00 µs |\n| sendmmsg/recvmmsg | busy-poll | 80 B | 5.00 µs | 9.00 µs |\n",
	} {
		assert.Contains(t, md, want)
	}
	// Every table line has as many cells as its header.
	for _, block := range strings.Split(md, "\n\n") {
		lines := strings.Split(strings.TrimSpace(block), "\n")
		if !strings.HasPrefix(lines[0], "|") {
			continue
		}
		cells := strings.Count(lines[0], "|")
		for _, l := range lines {
			assert.Equal(t, cells, strings.Count(l, "|"), l)
		}
	}
}

func TestBusyMachineIsSaid(t *testing.T) {
	r := testReport()
	r.Machine.LoadAvg = "17.5 18.0 16.0"
	var b bytes.Buffer
	require.NoError(t, r.writeMarkdown(&b))
	assert.Contains(t, b.String(), "load average 17.5 18.0 16.0 at the start (a shared, busy machine")

	assert.False(t, Machine{Cores: 2, LoadAvg: "1.9 0 0"}.busy())
	assert.True(t, Machine{Cores: 2, LoadAvg: "2.1 0 0"}.busy())
	assert.False(t, Machine{Cores: 2}.busy(), "unknown load")
}

func TestMarkdownWithoutCeiling(t *testing.T) {
	r := testReport()
	r.Ceiling = nil
	r.Errors = []string{"UDP ceiling: peer did not start"}
	var b bytes.Buffer
	require.NoError(t, r.writeMarkdown(&b))
	assert.NotContains(t, b.String(), "UDP ceiling of the same run")
	assert.Contains(t, b.String(), "\nNot measured: UDP ceiling: peer did not start\n")
	assert.False(t, r.complete())
}

func TestJSONRoundTrip(t *testing.T) {
	r := testReport()
	var b bytes.Buffer
	require.NoError(t, r.writeJSON(&b))
	var back Report
	require.NoError(t, json.Unmarshal(b.Bytes(), &back))
	assert.Equal(t, r, &back)

	// The keys other tools read.
	var raw map[string]any
	require.NoError(t, json.Unmarshal(b.Bytes(), &raw))
	assert.ElementsMatch(t, []string{"machine", "settings", "udp_ceiling", "rows"}, keys(raw))
	row := raw["rows"].([]any)[0].(map[string]any)
	assert.Equal(t, "write_bw-65536-mtu4096-q1", row["id"])
	assert.InDelta(t, 0.5, row["compare"].(map[string]any)["ratio"], 1e-9)
	assert.Equal(t, false, row["target"].(map[string]any)["met"])
	client := row["client"].(map[string]any)
	assert.InDelta(t, 1.25, client["system_calls_per_message"], 1e-9)
	assert.InDelta(t, 0.75, client["empty_receives_per_message"], 1e-9)
	assert.InDelta(t, 0.5, client["context_switches_per_message"], 1e-9)
	assert.InDelta(t, 0.25, client["voluntary_context_switches_per_message"], 1e-9)
	assert.NotContains(t, row["server"], "system_calls_per_message", "not reported")
	assert.NotContains(t, row, "default_gomaxprocs")
	def := raw["rows"].([]any)[1].(map[string]any)
	assert.Equal(t, "write_bw-65536-mtu4096-q1-default", def["id"])
	assert.Equal(t, true, def["default_gomaxprocs"])
	assert.InDelta(t, 0.5, def["vs_pinned"], 1e-9)
	lat := raw["rows"].([]any)[2].(map[string]any)
	assert.InDelta(t, 1250.0, lat["compare"].(map[string]any)["diff_ns"], 1e-9)
	assert.NotContains(t, lat["compare"], "ratio")
	assert.NotContains(t, lat, "client", "latency rows have no per-process counts")
}

func TestCompleteness(t *testing.T) {
	r := testReport()
	assert.False(t, r.complete(), "a failed row")
	r.Rows = r.Rows[:6]
	assert.True(t, r.complete())
	r.Rows = append(r.Rows, skippedRows(benchCase{kind: kindRate, verb: "SEND", size: 64, qps: 1}.inC(), "no perftest")...)
	assert.True(t, r.complete(), "a row this machine cannot run is no failure")
}

// The C rows get a table of their own, next to the Go rows they are compared with; one that
// cannot run here says why.
func TestMarkdownCRows(t *testing.T) {
	ceil := testCeiling()
	write := benchCase{kind: kindBandwidth, verb: "WRITE", size: 65536, mtu: 4096, qps: 1}
	lat := benchCase{kind: kindLatency, verb: "SEND", size: 64, qps: 1}
	cw := bwRow(write.inC(), bwResult{Messages: 10, BytesPerS: 930e6}, 20*time.Microsecond, ceil)
	cw.Client = &ProcessCost{ContextSwitches: 0.5}
	cw.Server = &ProcessCost{ContextSwitches: 0.25}
	rows := []Row{bwRow(write, bwResult{Messages: 10, BytesPerS: 1028e6}, 0, ceil), cw}
	rows = append(rows, latRows(lat, latResult{Iterations: 10, TypicalUS: 6.25, P99US: 12.5}, 0, ceil)...)
	rows = append(rows, skippedRows(lat.inC(), "ib_send_lat is not installed (perftest)")...)
	rows = append(rows, failedRows(benchCase{kind: kindRate, verb: "SEND", size: 64, qps: 1}.inC(), assertErr("make clib: exit status 2"))...)
	compareWithGo(rows)
	r := &Report{Settings: Settings{ClientAddr: "127.0.0.1", ServerAddr: "127.0.0.2"}, Rows: rows}
	var b bytes.Buffer
	require.NoError(t, r.writeMarkdown(&b))
	md := b.String()
	for _, want := range []string{
		"| measurement | gorxe Go tool | C perftest on the library | C vs Go | target | C vs ceiling | CPU per message | " +
			"context switches per message, client / server |\n|---|---:|---:|---:|---|---:|---:|---:|\n" +
			"| RC WRITE 64 KiB, MTU 4096 | 1028 MB/s | 930 MB/s | 0.90× | ≥ 0.9× Go ✓ | 0.45× | 2.00 µs | 0.500 / 0.250 |\n" +
			"| RC SEND 64 B half RTT p50 | 6.25 µs | not run: ib_send_lat is not installed (perftest) | — |  | — |  |  |\n" +
			"| RC SEND 64 B half RTT p99 | 12.50 µs | not run: ib_send_lat is not installed (perftest) | — |  | — |  |  |\n" +
			"| RC SEND 64 B message rate | — | failed: make clib: exit status 2 | — |  | — |  |  |\n",
	} {
		assert.Contains(t, md, want)
	}
	assert.Equal(t, 1, strings.Count(md, "| RC WRITE 64 KiB, MTU 4096 | 1028 MB/s | 2056 MB/s"), "the Go row stays in the main table, the C row leaves it")
	assert.False(t, r.complete(), "a C row that failed is a failure")
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
