package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/trace"
)

// runTrace implements `gorxe trace`: exit 0 when the diagram was written, 1 when the capture
// cannot be read or holds nothing to draw, 2 for a bad command line.
func runTrace(args []string, stdout, stderr io.Writer) int {
	o, err := trace.ParseArgs(args, stderr)
	switch {
	case errors.Is(err, trace.ErrHelp):
		trace.Usage(stdout)
		return exitOK
	case err != nil:
		fmt.Fprintf(stderr, "gorxe trace: %v\n\n", err)
		trace.Usage(stderr)
		return exitUsage
	}
	if err := trace.Run(o, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "gorxe trace: %s: %v\n", o.Input, err)
		return exitFailure
	}
	return exitOK
}
