package tool

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/loglevel"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/observe"
)

func TestCommonOptions(t *testing.T) {
	c := NewCommon()
	assert.Equal(t, loglevel.Default, c.LogLevel)
	rest, err := getopt.Parse([]string{"--bind", "10.0.0.1", "--pcap=run.pcapng", "--log-level", "debug",
		"--metrics", ":9108", "--counters", "host"}, c.Getopt())
	require.NoError(t, err)
	assert.Equal(t, []string{"host"}, rest)
	assert.Equal(t, Common{Bind: "10.0.0.1", Pcap: "run.pcapng", LogLevel: slog.LevelDebug,
		Observe: observe.Options{MetricsAddr: ":9108", Counters: true}}, c)
}

// TestUsage: every common option and environment variable is in the help, one line each.
func TestUsage(t *testing.T) {
	var b bytes.Buffer
	Usage(&b, "-a")
	out := b.String()
	for _, want := range []string{"--bind=<addr>", "(default: -a)", "--pcap=<file>", "GORXE_PCAP", "--log-level=<lvl>",
		"--metrics=<addr>", "--counters", "GORXE_FAULTS", "GORXE_PORT"} {
		assert.Contains(t, out, want)
	}
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		assert.LessOrEqual(t, len(l), 170, "help line too long: %q", l)
	}
}
