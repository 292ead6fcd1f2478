package loglevel

import (
	"errors"
	"io"
	"log/slog"
	"strings"
)

// Default is the level without --log-level: errors, at which a device logs nothing of its own
// events (a QP driven to the error state, a completion in error are warnings), so that a healthy
// run prints exactly what the C tool it stands in for prints and a failed one a single line, the
// tool's error. --log-level=warn shows the device's events behind a failure.
const Default = slog.LevelError

// Help describes the option's values, for a tool's usage text.
const Help = "device events to log on stderr: debug, info, warn or error (default: none of the device's own)"

// errLevel is a value that names no level.
var errLevel = errors.New("not a log level (debug, info, warn or error)")

// Parse returns the level s names: debug, info, warn or error, in any case.
func Parse(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, errLevel
}

// Option returns the setter of an option value stored in *l, in the form getopt.Option.Set and
// flag.Func take.
func Option(l *slog.Level) func(string) error {
	return func(s string) error {
		v, err := Parse(s)
		if err == nil {
			*l = v
		}
		return err
	}
}

// Logger returns the logger a tool gives its devices (gorxe.Config.Logger): slog's text handler
// on w (the tool's stderr) with level l.
func Logger(w io.Writer, l slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}
