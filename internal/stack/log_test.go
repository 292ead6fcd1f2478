package stack

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/gorxe/gorxe/transport"
)

// A QP logs a burst of each rate-limited kind per interval; the record after a pause counts what
// was left out, and kinds are limited independently.
func TestLogLimit(t *testing.T) {
	var l logLimit
	t0 := time.Unix(1_700_000_000, 0)
	for i := range logBurst {
		n, ok := l.allow(transport.EventNAKSent, t0.Add(time.Duration(i)*time.Millisecond))
		assert.True(t, ok, "event %d of the burst", i)
		assert.Zero(t, n)
	}
	for i := range 5 {
		_, ok := l.allow(transport.EventNAKSent, t0.Add(time.Duration(100+i)*time.Millisecond))
		assert.False(t, ok, "event %d past the burst", i)
	}
	n, ok := l.allow(transport.EventNAKReceived, t0.Add(200*time.Millisecond))
	assert.True(t, ok, "another kind has its own budget")
	assert.Zero(t, n)
	n, ok = l.allow(transport.EventNAKSent, t0.Add(logInterval))
	assert.True(t, ok, "a new interval")
	assert.Equal(t, uint64(5), n, "the events left out")
	n, ok = l.allow(transport.EventNAKSent, t0.Add(logInterval+time.Millisecond))
	assert.True(t, ok)
	assert.Zero(t, n, "counted once")
}

// levelHandler enables the levels from min up and drops the records.
type levelHandler struct{ min slog.Level }

func (h levelHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.min }
func (levelHandler) Handle(context.Context, slog.Record) error      { return nil }
func (h levelHandler) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h levelHandler) WithGroup(string) slog.Handler                { return h }

// The engines are asked for what the logger's level lets through: nothing when it is off, no
// per-packet kinds at Info.
func TestEventMaskFollowsLevel(t *testing.T) {
	perPacket := transport.EventNAKSent.Mask() | transport.EventNAKReceived.Mask() | transport.EventRNRTimeout.Mask()
	for _, c := range []struct {
		log  *slog.Logger
		want transport.EventMask
	}{
		{slog.New(slog.DiscardHandler), 0},
		{slog.New(levelHandler{slog.LevelError}), 0},
		{slog.New(levelHandler{slog.LevelWarn}), transport.EventQPError.Mask() | transport.EventCompletionError.Mask()},
		{slog.New(levelHandler{slog.LevelInfo}), transport.AllEvents &^ perPacket},
		{slog.New(levelHandler{slog.LevelDebug}), transport.AllEvents},
	} {
		r := &Stack{log: c.log}
		assert.Equal(t, c.want, r.eventMask())
	}
}
