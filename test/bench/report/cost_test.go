//go:build linux

package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The counters a send_bw pair printed with --counters, after the result table.
func TestParseToolCounters(t *testing.T) {
	c, ok := parseToolCounters(readTestdata(t, "send_bw-64-q1-counters.client.txt"))
	require.True(t, ok)
	assert.Equal(t, map[string]uint64{"sent_pkts": 136628, "rcvd_pkts": 1416, "rdma_sends": 136628, "sent_bytes": 8744192,
		"net_gso_sends": 2732, "net_gso_segments": 135262, "net_send_calls": 2732, "net_recv_calls": 137019,
		"net_recv_empty": 135607}, c)

	c, ok = parseToolCounters(readTestdata(t, "send_bw-64-q1-counters.server.txt"))
	require.True(t, ok)
	assert.Equal(t, uint64(1416), c[counterSendCalls])
	assert.Equal(t, uint64(180674), c[counterRecvCalls])
	assert.Equal(t, uint64(179258), c[counterRecvEmpty])

	_, ok = parseToolCounters(readTestdata(t, "write_bw-65536-mtu4096-q1.client.txt"))
	assert.False(t, ok, "a run without --counters")

	c, ok = parseToolCounters("counters of gorxe_127.0.0.1:\n  all zero\n")
	require.True(t, ok)
	assert.Empty(t, c)
}

func TestProcessCountsPerMessage(t *testing.T) {
	var p processCounts
	p.voluntary, p.involuntary = 300, 100
	p.addCalls(readTestdata(t, "send_bw-64-q1-counters.client.txt"))
	require.True(t, p.haveCalls)
	c := p.scaled(0.5).perMessage(1000)
	require.NotNil(t, c)
	assert.InDelta(t, 0.2, c.ContextSwitches, 1e-12)
	assert.InDelta(t, 0.15, c.VoluntarySwitches, 1e-12)
	require.NotNil(t, c.SystemCalls)
	assert.InDelta(t, (2732+137019)*0.5/1000, *c.SystemCalls, 1e-9)
	assert.InDelta(t, 135607*0.5/1000, *c.EmptyReceives, 1e-9)

	assert.Nil(t, p.perMessage(0), "no messages, no figure")
}

func TestProcessCountsWithoutCalls(t *testing.T) {
	// A gorxe from before the system-call counters prints the table without them.
	var p processCounts
	p.addCalls("counters of gorxe_127.0.0.1:\n  sent_pkts  10\n  rcvd_pkts  3\n")
	assert.False(t, p.haveCalls)
	c := p.perMessage(10)
	require.NotNil(t, c)
	assert.Nil(t, c.SystemCalls)
	assert.Nil(t, c.EmptyReceives)

	// A device that sent nothing made no send call; the table says so by leaving it out.
	p.addCalls("counters of gorxe_127.0.0.2:\n  rcvd_pkts  3\n  net_recv_calls  5\n")
	require.True(t, p.haveCalls)
	assert.InDelta(t, 0.5, *p.perMessage(10).SystemCalls, 1e-12)

	p = processCounts{}
	p.addCalls("no table\n")
	assert.False(t, p.haveCalls)
}
