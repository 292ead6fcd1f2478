package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/stats"
)

// runStats implements `gorxe stats`: a live view of a running tool's counters from its --metrics.
func runStats(args []string, stdout, stderr io.Writer) int {
	o, err := stats.ParseArgs(args)
	switch {
	case errors.Is(err, stats.ErrHelp):
		stats.Usage(stdout)
		return exitOK
	case err != nil:
		fmt.Fprintf(stderr, "gorxe stats: %v\n\n", err)
		stats.Usage(stderr)
		return exitUsage
	}
	o.Clear = !o.Once && isTerminal(stdout)
	ctx, stop := interruptible()
	defer stop()
	if err := stats.Run(ctx, o, stdout); err != nil {
		fmt.Fprintf(stderr, "gorxe stats: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// isTerminal reports whether w is a terminal, where a refresh redraws the screen instead of
// following the previous one.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
