//go:build linux

package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseCounts(t *testing.T) {
	n, err := parseCounts("1, 16,256,,1024")
	require.NoError(t, err)
	assert.Equal(t, []int{1, 16, 256, 1024}, n)
	for _, bad := range []string{"0", "x", "16385", "-1"} {
		_, err := parseCounts(bad)
		assert.Error(t, err, bad)
	}
}

func TestParseOptions(t *testing.T) {
	o := options{duration: 1500 * time.Millisecond, latIters: 100, timeout: time.Minute}
	require.NoError(t, parseOptions(&o, "1,16", "127.0.0.1", "127.0.0.2", "write_bw"))
	assert.Equal(t, 2, o.seconds(), "perftest takes whole seconds; a fraction rounds up")
	assert.True(t, o.run.MatchString("write_bw-4096-mtu1024-q1"))

	o.duration = 100 * time.Millisecond
	assert.Equal(t, 1, o.seconds())

	assert.ErrorContains(t, parseOptions(&o, "1", "127.0.0.1", "127.0.0.1", ""), "must differ")
	assert.Error(t, parseOptions(&o, "1", "nowhere", "127.0.0.2", ""))
	assert.Error(t, parseOptions(&o, "1", "127.0.0.1", "127.0.0.2", "("))
	o.duration = 0
	assert.Error(t, parseOptions(&o, "1", "127.0.0.1", "127.0.0.2", ""))
}

// Each tool process gets half the cores unless the environment names GOMAXPROCS.
func TestToolMaxProcs(t *testing.T) {
	tests := []struct {
		env   string
		cores int
		want  int
	}{
		{"", 2, 1},
		{"", 1, 1},
		{"", 16, 8},
		{"", 64, 32},
		{"3", 2, 3},
		{"0", 8, 4},
		{"x", 8, 4},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, toolMaxProcs(tt.env, tt.cores), "GOMAXPROCS=%q on %d cores", tt.env, tt.cores)
	}
}

func TestIdleTallyPerQP(t *testing.T) {
	assert.InDelta(t, 1024.0, idleTally{QPs: 4, RSSBefore: 1000, RSSAfter: 1000 + 8*1024}.perQP(), 1e-9)
	assert.Zero(t, idleTally{QPs: 4, RSSBefore: 2000, RSSAfter: 1000}.perQP(), "a shrinking process says nothing")
	assert.Zero(t, idleTally{}.perQP())
}
