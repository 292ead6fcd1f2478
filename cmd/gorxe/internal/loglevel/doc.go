// Package loglevel is the --log-level option every gorxe tool shares: it parses the level and
// makes the logger the tool's devices report their events to, slog's text handler on stderr.
package loglevel
