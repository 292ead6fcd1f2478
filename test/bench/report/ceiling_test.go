//go:build linux

package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseCeiling(t *testing.T) {
	js := `{"duration_s": 2, "src": "127.0.0.1", "dst": "127.0.0.2",
	  "throughput": [{"path": "gso+gro", "datagram_bytes": 4112, "sent_pps": 1, "received_pps": 2,
	                  "received_bytes_per_s": 3, "loss": 0.5, "segments_per_send": 15, "sender_cpu_ns_per_datagram": 9}],
	  "pingpong": [{"path": "sendmmsg", "wait": "sleep", "datagram_bytes": 80, "samples": 10, "half_rtt_p50_ns": 30000, "half_rtt_p99_ns": 40000},
	               {"path": "sendmmsg", "wait": "poll", "datagram_bytes": 80, "samples": 10, "half_rtt_p50_ns": 4000, "half_rtt_p99_ns": 8000}]}`
	c, err := parseCeiling([]byte(js))
	require.NoError(t, err)
	r, ok := c.rate(pathGSO, 4112)
	require.True(t, ok)
	assert.Equal(t, ceilingRate{Path: pathGSO, DatagramBytes: 4112, SentPPS: 1, ReceivedPPS: 2, ReceivedBytesPerS: 3,
		Loss: 0.5, SegmentsPerSend: 15, SenderCPUNSPerDatagram: 9}, r)
	_, ok = c.rate(pathGSO, 1040)
	assert.False(t, ok)
	_, ok = c.rate(pathMmsg, 4112)
	assert.False(t, ok)
	p, ok := c.ping(pathMmsg, waitPoll)
	require.True(t, ok)
	assert.Equal(t, int64(4000), p.HalfRTTP50NS)
	p, ok = c.ping(pathMmsg, "sleep")
	require.True(t, ok)
	assert.Equal(t, int64(30000), p.HalfRTTP50NS)
	_, ok = c.ping(pathGSO, waitPoll)
	assert.False(t, ok)

	var none *ceilingReport
	_, ok = none.rate(pathGSO, 4112)
	assert.False(t, ok, "a failed ceiling run has no rows")
}

func TestParseCeilingRejects(t *testing.T) {
	_, err := parseCeiling([]byte("not json"))
	assert.Error(t, err)
	_, err = parseCeiling([]byte(`{"duration_s": 2}`))
	assert.ErrorContains(t, err, "no measurements")
}
