package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/udaddy"
)

// runUdaddy runs the udaddy peer; errors are one line on stderr after the tool's own status
// lines.
func runUdaddy(args []string, stdout, stderr io.Writer) int {
	o, err := udaddy.ParseArgs(args)
	switch {
	case errors.Is(err, udaddy.ErrHelp):
		udaddy.Usage(stdout)
		return exitOK
	case errors.Is(err, getopt.ErrUsage):
		fmt.Fprintf(stderr, "gorxe udaddy: %v\n", err)
		udaddy.Usage(stderr)
		return exitUsage
	case err != nil:
		fmt.Fprintf(stderr, "gorxe udaddy: %v\n", err)
		return exitUsage
	}
	ctx, stop := interruptible()
	defer stop()
	if err := udaddy.Run(ctx, o, stdout); err != nil {
		fmt.Fprintf(stderr, "gorxe udaddy: %v\n", err)
		return failure(ctx)
	}
	return exitOK
}
