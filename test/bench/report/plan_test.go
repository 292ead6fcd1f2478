//go:build linux

package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlanCoversTheIssueOnce(t *testing.T) {
	cases := plan([]int{1, 16, 256, 1024})
	var ids []string
	seen := map[string]bool{}
	for _, c := range cases {
		require.False(t, seen[c.id()], "duplicate %s", c.id())
		seen[c.id()] = true
		ids = append(ids, c.id())
	}
	assert.Equal(t, []string{
		"write_bw-4096-mtu1024-q1", "write_bw-65536-mtu1024-q1", "write_bw-1048576-mtu1024-q1",
		"write_bw-4096-mtu4096-q1", "write_bw-65536-mtu4096-q1",
		"write_bw-65536-mtu4096-q1-default", "ib_write_bw-65536-mtu4096-q1", "write_bw-1048576-mtu4096-q1",
		"read_bw-65536-mtu4096-q1", "read_bw-65536-mtu4096-q1-default",
		"send_bw-64-q1", "send_bw-64-q1-default", "ib_send_bw-64-q1",
		"send_lat-64", "send_lat-64-default", "ib_send_lat-64", "write_lat-64", "read_lat-64",
		"write_bw-65536-mtu4096-q16", "send_bw-64-q16",
		"write_bw-65536-mtu4096-q256", "send_bw-64-q256",
		"write_bw-65536-mtu4096-q1024", "send_bw-64-q1024",
	}, ids)

	targets := map[string]targetSpec{}
	for _, c := range cases {
		if c.target != nil {
			targets[c.id()] = *c.target
		}
		if c.tailTarget != nil {
			targets[c.id()+"-p99"] = *c.tailTarget
		}
		assert.Equal(t, c.defaultProcs, strings.HasSuffix(c.id(), defaultSuffix), c.id())
	}
	assert.Equal(t, map[string]targetSpec{
		"write_bw-65536-mtu1024-q1": {targetMinRatio, 0.6},
		"write_bw-65536-mtu4096-q1": {targetMinRatio, 0.6},
		"read_bw-65536-mtu4096-q1":  {targetMinRatio, 0.5},
		"send_bw-64-q1":             {targetMinValue, 1.2e6},
		"send_lat-64":               {targetMaxDiff, 2000},
		"send_lat-64-p99":           {targetMaxDiff, 0},
		// The issue's targets for perftest's C tools on the library, against the Go tools.
		"ib_write_bw-65536-mtu4096-q1": {targetMinVsGo, 0.9},
		"ib_send_bw-64-q1":             {targetMinVsGo, 0.8},
		"ib_send_lat-64":               {targetMaxDiffVsGo, 1000},
	}, targets, "a default run's target is judged against its pinned run")
}

// The headline cases are the issue's table: 64 KiB WRITE at MTU 4096 and READ, the 64 B SEND
// rate and half round trip, one QP each.
func TestHeadline(t *testing.T) {
	var ids []string
	for _, c := range plan([]int{1, 16}) {
		if c.headline() {
			ids = append(ids, c.id())
			d := c.atDefault()
			assert.True(t, d.defaultProcs)
			assert.Nil(t, d.target)
			assert.Nil(t, d.tailTarget)
			assert.False(t, d.headline(), "a default run is not run again")
			assert.Equal(t, c.args(2, 100), d.args(2, 100), "same arguments")
		}
	}
	assert.Equal(t, []string{"write_bw-65536-mtu4096-q1", "read_bw-65536-mtu4096-q1", "send_bw-64-q1", "send_lat-64"}, ids)
}

func TestCaseArgs(t *testing.T) {
	bw := benchCase{kind: kindBandwidth, verb: "WRITE", size: 65536, mtu: 1024, qps: 256}
	assert.Equal(t, []string{"-s", "65536", "-D", "5", "-f", "1", "-q", "256", "-m", "1024"}, bw.args(3, 500))
	assert.InDelta(t, 0.6, bw.measuredShare(3), 1e-9, "3 s measured of a 5 s run")
	assert.Equal(t, "write_bw", bw.tool())

	rate := benchCase{kind: kindRate, verb: "SEND", size: 64, qps: 1}
	assert.Equal(t, []string{"-s", "64", "-D", "4", "-f", "1"}, rate.args(2, 500))
	assert.Equal(t, "send_bw", rate.tool())
	assert.Equal(t, defaultMTU, rate.effectiveMTU())

	lat := benchCase{kind: kindLatency, verb: "READ", size: 64, qps: 1}
	assert.Equal(t, []string{"-s", "64", "-n", "500"}, lat.args(2, 500))
	assert.Equal(t, "read_lat", lat.tool())
}

// A C case runs perftest's binary of the same name with the same arguments, and the GID index
// of the device's IPv4 address.
func TestCCaseArgs(t *testing.T) {
	bw := benchCase{kind: kindBandwidth, verb: "WRITE", size: 65536, mtu: 4096, qps: 1}.inC()
	assert.Equal(t, "ib_write_bw", bw.tool())
	assert.Equal(t, "ib_write_bw-65536-mtu4096-q1", bw.id())
	assert.Equal(t, []string{"-s", "65536", "-D", "4", "-f", "1", "-m", "4096", "-x", "1"}, bw.args(2, 500))
	assert.False(t, bw.headline())

	lat := benchCase{kind: kindLatency, verb: "SEND", size: 64, qps: 1}.inC()
	assert.Equal(t, "ib_send_lat", lat.tool())
	assert.Equal(t, []string{"-s", "64", "-n", "500", "-x", "1"}, lat.args(2, 500))
	assert.Nil(t, lat.tailTarget, "the p99 difference is shown, not judged")
}

func TestLabels(t *testing.T) {
	assert.Equal(t, "RC WRITE 1 MiB, MTU 1024", label(benchCase{kind: kindBandwidth, verb: "WRITE", size: 1 << 20, mtu: 1024, qps: 1}))
	assert.Equal(t, "RC READ 64 KiB, MTU 4096", label(benchCase{kind: kindBandwidth, verb: "READ", size: 65536, qps: 1}))
	assert.Equal(t, "RC SEND 64 B message rate, 1024 QPs", label(benchCase{kind: kindRate, verb: "SEND", size: 64, qps: 1024}))
}
