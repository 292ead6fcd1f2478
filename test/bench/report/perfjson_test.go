//go:build linux

package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPerftestJSONBandwidth(t *testing.T) {
	j, err := decodePerftestJSON([]byte(readTestdata(t, "write_bw-65536-mtu1024-q2.client.json")))
	require.NoError(t, err)
	c := benchCase{kind: kindBandwidth, verb: "WRITE", size: 65536, mtu: 1024, qps: 2}
	require.NoError(t, j.checkRun(c))
	r, err := j.bw()
	require.NoError(t, err)
	assert.Equal(t, 65536, r.Size)
	assert.Equal(t, uint64(4000), r.Messages)
	assert.InDelta(t, 245.23*bytesPerMB, r.BytesPerS, 1e-6)
	assert.InDelta(t, 249.09*bytesPerMB, r.PeakBytesPS, 1e-6)
	assert.InDelta(t, 3924.0, r.MsgsPerS, 1e-6)

	// The JSON file and the text output of one run say the same.
	text, err := parseBW(readTestdata(t, "write_bw-65536-mtu1024-q2.client.txt"))
	require.NoError(t, err)
	assert.Equal(t, text, r)

	_, err = j.lat()
	assert.ErrorContains(t, err, "no latency result")
}

func TestPerftestJSONLatency(t *testing.T) {
	j, err := decodePerftestJSON([]byte(readTestdata(t, "send_lat-64.client.json")))
	require.NoError(t, err)
	require.NoError(t, j.checkRun(benchCase{kind: kindLatency, verb: "SEND", size: 64, qps: 1}))
	r, err := j.lat()
	require.NoError(t, err)
	assert.Equal(t, latResult{Size: 64, Iterations: 500, MinUS: 45.79, MaxUS: 746.45, TypicalUS: 87.14,
		AvgUS: 107.24, StdevUS: 60.72, P99US: 340, P999US: 746.45}, r)
	_, err = j.bw()
	assert.ErrorContains(t, err, "no bandwidth result")
}

func TestPerftestJSONChecksTheRun(t *testing.T) {
	j, err := decodePerftestJSON([]byte(readTestdata(t, "write_bw-65536-mtu1024-q2.client.json")))
	require.NoError(t, err)
	assert.ErrorContains(t, j.checkRun(benchCase{kind: kindBandwidth, verb: "WRITE", size: 65536, mtu: 4096, qps: 2}), "MTU 1024, not 4096")
	assert.ErrorContains(t, j.checkRun(benchCase{kind: kindBandwidth, verb: "WRITE", size: 65536, mtu: 1024, qps: 16}), "2 QPs, not 16")
	assert.NoError(t, j.checkRun(benchCase{kind: kindBandwidth, verb: "WRITE", size: 65536, qps: 2}), "no MTU asked, none checked")

	_, err = decodePerftestJSON([]byte(`{"results": `))
	assert.Error(t, err)
}

func TestRowsFromRunPrefersJSON(t *testing.T) {
	c := benchCase{kind: kindBandwidth, verb: "WRITE", size: 65536, mtu: 1024, qps: 2}
	text := readTestdata(t, "write_bw-65536-mtu1024-q2.client.txt")
	fromJSON, err := rowsFromRun(c, pairResult{client: "garbage", clientJSON: []byte(readTestdata(t, "write_bw-65536-mtu1024-q2.client.json"))}, nil)
	require.NoError(t, err)
	fromText, err := rowsFromRun(c, pairResult{client: text}, nil)
	require.NoError(t, err)
	assert.Equal(t, fromText, fromJSON)
	require.Len(t, fromJSON, 1)
	assert.InDelta(t, 245.23*bytesPerMB, fromJSON[0].Value, 1e-6)

	_, err = rowsFromRun(c, pairResult{client: text, clientJSON: []byte("{}")}, nil)
	assert.Error(t, err, "a JSON file without a result is an error, not a fallback")

	lat := benchCase{kind: kindLatency, verb: "SEND", size: 64, qps: 1}
	rows, err := rowsFromRun(lat, pairResult{client: readTestdata(t, "send_lat-64.client.txt")}, nil)
	require.NoError(t, err)
	assert.Len(t, rows, 2)
}

// A bandwidth or rate row carries each process's counts per message; a latency row none.
func TestRowsFromRunPerProcess(t *testing.T) {
	res := pairResult{client: readTestdata(t, "send_bw-64-q1-counters.client.txt"), server: readTestdata(t, "send_bw-64-q1-counters.server.txt")}
	res.clientCounts = processCounts{voluntary: 136500, involuntary: 13650}
	res.clientCounts.addCalls(res.client)
	res.serverCounts = processCounts{voluntary: 273000}
	res.serverCounts.addCalls(res.server)
	rows, err := rowsFromRun(benchCase{kind: kindRate, verb: "SEND", size: 64, qps: 1}, res, nil)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	r := rows[0]
	assert.Equal(t, uint64(136500), r.Messages)
	require.NotNil(t, r.Client)
	require.NotNil(t, r.Server)
	assert.InDelta(t, 1.1, r.Client.ContextSwitches, 1e-12)
	assert.InDelta(t, 1.0, r.Client.VoluntarySwitches, 1e-12)
	assert.InDelta(t, 2.0, r.Server.ContextSwitches, 1e-12)
	assert.InDelta(t, float64(2732+137019)/136500, *r.Client.SystemCalls, 1e-12)
	assert.InDelta(t, float64(1416+180674)/136500, *r.Server.SystemCalls, 1e-12)
	assert.InDelta(t, float64(179258)/136500, *r.Server.EmptyReceives, 1e-12)

	lat, err := rowsFromRun(benchCase{kind: kindLatency, verb: "SEND", size: 64, qps: 1},
		pairResult{client: readTestdata(t, "send_lat-64.client.txt"), clientCounts: processCounts{voluntary: 5}}, nil)
	require.NoError(t, err)
	assert.Nil(t, lat[0].Client)
	assert.Nil(t, lat[1].Server)
}
