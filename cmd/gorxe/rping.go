package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/rping"
)

// runRping runs the rping peer; errors are one line, and Ctrl-C disconnects and exits 130.
func runRping(args []string, stdout, stderr io.Writer) int {
	o, err := rping.ParseArgs(args)
	switch {
	case errors.Is(err, rping.ErrHelp):
		rping.Usage(stdout)
		return exitOK
	case errors.Is(err, getopt.ErrUsage):
		fmt.Fprintf(stderr, "gorxe rping: %v\n", err)
		rping.Usage(stderr)
		return exitUsage
	case err != nil:
		fmt.Fprintf(stderr, "gorxe rping: %v\n", err)
		return exitUsage
	}
	ctx, stop := interruptible()
	defer stop()
	if err := rping.Run(ctx, o, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "gorxe rping: %v\n", err)
		return failure(ctx)
	}
	return exitOK
}
