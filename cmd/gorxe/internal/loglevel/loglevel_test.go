package loglevel

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	for s, want := range map[string]slog.Level{
		"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "warning": slog.LevelWarn,
		"error": slog.LevelError, "DEBUG": slog.LevelDebug, "Info": slog.LevelInfo,
	} {
		got, err := Parse(s)
		require.NoError(t, err, s)
		assert.Equal(t, want, got, s)
	}
	for _, s := range []string{"", "trace", "1", "info+2"} {
		_, err := Parse(s)
		assert.ErrorIs(t, err, errLevel, "%q", s)
	}
}

func TestOption(t *testing.T) {
	l := Default
	set := Option(&l)
	require.NoError(t, set("debug"))
	assert.Equal(t, slog.LevelDebug, l)
	require.Error(t, set("loud"))
	assert.Equal(t, slog.LevelDebug, l, "a bad value changes nothing")
}

// The logger writes slog's text format at the level asked for and above.
func TestLogger(t *testing.T) {
	var buf bytes.Buffer
	log := Logger(&buf, slog.LevelInfo).With("device", "gorxe_lo")
	assert.False(t, log.Enabled(context.Background(), slog.LevelDebug))
	log.Debug("hidden")
	log.Warn("gorxe qp state", "qpn", 17, "to", "ERR")
	assert.Contains(t, buf.String(), `level=WARN msg="gorxe qp state" device=gorxe_lo qpn=17 to=ERR`)
	assert.NotContains(t, buf.String(), "hidden")
}
