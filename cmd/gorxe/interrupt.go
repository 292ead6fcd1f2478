package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// exitInterrupted is the status of a command ended by Ctrl-C or SIGTERM: 128 + SIGINT, what a
// shell reports for a process the signal killed, so scripts see the same either way.
const exitInterrupted = 130

// interruptible returns a context that Ctrl-C and SIGTERM cancel, so that a command can print
// what it measured, tell its peer and exit instead of dying mid-line.
func interruptible() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// failure is the exit status of a command that failed while ctx was its context.
func failure(ctx context.Context) int {
	if ctx.Err() != nil {
		return exitInterrupted
	}
	return exitFailure
}
