//go:build linux

package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	require.NoError(t, err)
	return string(b)
}

func TestParseBWFromToolOutput(t *testing.T) {
	r, err := parseBW(readTestdata(t, "write_bw-65536-mtu4096-q1.client.txt"))
	require.NoError(t, err)
	assert.Equal(t, 65536, r.Size)
	assert.Equal(t, uint64(6955), r.Messages)
	assert.InDelta(t, 434.69*bytesPerMB, r.BytesPerS, 1)
	assert.InDelta(t, 6955.0, r.MsgsPerS, 0.5)
	assert.Zero(t, r.PeakBytesPS, "a run by duration has no peak")
}

func TestParseBWGbits(t *testing.T) {
	out := "---\n #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n" +
		" 4096       1000             3.50               3.20  \t\t   0.097656\n---\n"
	r, err := parseBW(out)
	require.NoError(t, err)
	assert.InDelta(t, 3.2e9/8, r.BytesPerS, 1)
	assert.InDelta(t, 3.5e9/8, r.PeakBytesPS, 1)
	assert.InDelta(t, 97656.0, r.MsgsPerS, 0.5)
}

func TestParseLatFromToolOutput(t *testing.T) {
	r, err := parseLat(readTestdata(t, "send_lat-64.client.txt"))
	require.NoError(t, err)
	assert.Equal(t, latResult{Size: 64, Iterations: 2000, MinUS: 45.85, MaxUS: 12919.36, TypicalUS: 110.68,
		AvgUS: 320.10, StdevUS: 601.57, P99US: 2585.42, P999US: 9608.29}, r)

	r, err = parseLat(readTestdata(t, "read_lat-64.client.txt"))
	require.NoError(t, err)
	assert.Equal(t, 64, r.Size)
	assert.InDelta(t, 114.81, r.TypicalUS, 1e-9)
}

func TestParseRejectsOutputWithoutResult(t *testing.T) {
	// A read_lat server prints no results: only the client measures.
	_, err := parseLat(readTestdata(t, "read_lat-64.server.txt"))
	require.ErrorContains(t, err, "no result table")

	header := " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
	_, err = parseBW(header + strings.Repeat("-", 87) + "\n")
	require.ErrorContains(t, err, "no result")

	_, err = parseBW(header + " 65536 100 1.0 2.0\n")
	require.ErrorContains(t, err, "4 fields")

	_, err = parseBW(header + " 65536 100 1.0 x 0.1\n")
	require.ErrorContains(t, err, `"x"`)
}

func TestParseRejectsTheOtherKind(t *testing.T) {
	_, err := parseBW(readTestdata(t, "send_lat-64.client.txt"))
	require.ErrorContains(t, err, "not a bandwidth result header")
	_, err = parseLat(readTestdata(t, "write_bw-65536-mtu4096-q1.client.txt"))
	require.ErrorContains(t, err, "not a latency result header")

	// A latency run by duration prints an average only.
	dur := " #bytes        #iterations       t_avg[usec]    tps average\n 64       1000            5.00        100000.00\n"
	_, err = parseLat(dur)
	require.ErrorContains(t, err, "with percentiles")
}

// perftest's own C tools, run on gorxe's library (testdata/ib_*: their output as it came), print
// the tables the text parsers read: a run by duration with no peak, a run by iterations with one,
// and a latency run by iterations with percentiles, which a C server prints too.
func TestParsePerftestCOutput(t *testing.T) {
	r, err := parseBW(readTestdata(t, "ib_write_bw-65536-mtu4096-q1.client.txt"))
	require.NoError(t, err)
	assert.Equal(t, bwResult{Size: 65536, Messages: 27770, BytesPerS: 867.80 * bytesPerMB, MsgsPerS: 13885}, r)

	r, err = parseBW(readTestdata(t, "ib_send_bw-64-q1.client.txt"))
	require.NoError(t, err)
	assert.Equal(t, 64, r.Size)
	assert.Equal(t, uint64(1000), r.Messages)
	assert.InDelta(t, 5.50*bytesPerMB, r.BytesPerS, 1e-6)
	assert.InDelta(t, 21.36*bytesPerMB, r.PeakBytesPS, 1e-6)
	assert.InDelta(t, 90070.0, r.MsgsPerS, 1e-6)

	for _, side := range []string{"client", "server"} {
		l, err := parseLat(readTestdata(t, "ib_send_lat-64."+side+".txt"))
		require.NoError(t, err, side)
		assert.Equal(t, 64, l.Size)
		assert.Equal(t, uint64(1000), l.Iterations)
	}
	l, err := parseLat(readTestdata(t, "ib_send_lat-64.client.txt"))
	require.NoError(t, err)
	assert.Equal(t, latResult{Size: 64, Iterations: 1000, MinUS: 13.82, MaxUS: 1791.07, TypicalUS: 43.15,
		AvgUS: 62.50, StdevUS: 98.64, P99US: 714.85, P999US: 1791.07}, l)

	_, err = parseLat(readTestdata(t, "ib_send_bw-64-q1.client.txt"))
	require.ErrorContains(t, err, "not a latency result header")
}

// A C row is built from the tool's text output like a Go tool's without --out_json.
func TestRowsFromCRun(t *testing.T) {
	c := benchCase{kind: kindLatency, verb: "SEND", size: 64, qps: 1}.inC()
	rows, err := rowsFromRun(c, pairResult{client: readTestdata(t, "ib_send_lat-64.client.txt")}, testCeiling())
	require.NoError(t, err)
	require.Len(t, rows, 2)
	assert.Equal(t, "ib_send_lat-64-p50", rows[0].ID)
	assert.True(t, rows[0].CPerftest)
	assert.Equal(t, "ib_send_lat", rows[0].Tool)
	assert.InDelta(t, 43150.0, rows[0].Value, 1e-6)
	assert.Nil(t, rows[0].Target, "judged against the Go row once the run is over")
}
