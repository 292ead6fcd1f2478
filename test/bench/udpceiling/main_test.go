package main

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPercentile(t *testing.T) {
	var s []time.Duration
	assert.Zero(t, percentile(s, 0.5))
	for i := 1; i <= 100; i++ {
		s = append(s, time.Duration(i))
	}
	assert.Equal(t, time.Duration(50), percentile(s, 0.50))
	assert.Equal(t, time.Duration(99), percentile(s, 0.99))
	assert.Equal(t, time.Duration(1), percentile(s[:1], 0.99))
}

func TestParseConfig(t *testing.T) {
	c, err := parseConfig(time.Second, "80, 1040,4112", "sendmmsg, gso+gro", "127.0.0.1", "127.0.0.2")
	require.NoError(t, err)
	assert.Equal(t, []int{80, 1040, 4112}, c.sizes)
	assert.Equal(t, []path{pathMmsg, pathGSO}, c.paths)
	for _, bad := range [][4]string{
		{"80,x", "gro", "127.0.0.1", "127.0.0.2"},
		{"4", "gro", "127.0.0.1", "127.0.0.2"},
		{"80", "gro", "127.0.0.1", "::1"},
		{"80", "gro", "nowhere", "127.0.0.2"},
		{"80", "tcp", "127.0.0.1", "127.0.0.2"},
	} {
		_, err := parseConfig(time.Second, bad[0], bad[1], bad[2], bad[3])
		assert.Error(t, err, "%v", bad)
	}
	_, err = parseConfig(0, "80", "gro", "127.0.0.1", "127.0.0.2")
	assert.Error(t, err)
}

func TestReportFormats(t *testing.T) {
	r := &report{DurationS: 2, Src: "127.0.0.1", Dst: "127.0.0.2",
		Throughput: []throughputRow{{Path: string(pathGSO), DatagramBytes: 80, SentPPS: 9.5e6, ReceivedPPS: 9.25e6,
			ReceivedBytesPerS: 740e6, Loss: 0.01, SegmentsPerSend: 64, SegmentsPerRead: 64, SenderCPUNSPerDatagram: 90, ReceiverCPUNSPerDatagram: 170}},
		PingPong: []pingPongRow{{Path: string(pathMmsg), Wait: string(waitPoll), DatagramBytes: 80, Samples: 10, HalfRTTP50NS: 5600, HalfRTTP99NS: 9100}},
	}
	var md bytes.Buffer
	require.NoError(t, r.writeMarkdown(&md))
	assert.Contains(t, md.String(), "| UDP_SEGMENT + UDP_GRO | 80 B | 9.500 Mpps | 9.250 Mpps | 740 MB/s | 1.0% | 0.09 µs | 0.17 µs | 64.0 | 64.0 |")
	assert.Contains(t, md.String(), "| sendmmsg/recvmmsg | poll | 80 B | 5.60 µs | 9.10 µs | 10 |")

	var js bytes.Buffer
	require.NoError(t, r.writeJSON(&js))
	var back report
	require.NoError(t, json.Unmarshal(js.Bytes(), &back))
	assert.Equal(t, *r, back)
}
