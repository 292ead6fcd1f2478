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
