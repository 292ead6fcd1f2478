package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/cmatose"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
)

// runUcmatose runs the ucmatose peer; errors are one line on stderr after the tool's own status
// lines.
func runUcmatose(args []string, stdout, stderr io.Writer) int {
	o, err := cmatose.ParseArgs(args)
	switch {
	case errors.Is(err, cmatose.ErrHelp):
		cmatose.Usage(stdout)
		return exitOK
	case errors.Is(err, getopt.ErrUsage):
		fmt.Fprintf(stderr, "gorxe ucmatose: %v\n", err)
		cmatose.Usage(stderr)
		return exitUsage
	case err != nil:
		fmt.Fprintf(stderr, "gorxe ucmatose: %v\n", err)
		return exitUsage
	}
	for _, w := range o.Warnings {
		fmt.Fprintln(stderr, w)
	}
	ctx, stop := interruptible()
	defer stop()
	if err := cmatose.Run(ctx, o, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "gorxe ucmatose: %v\n", err)
		return failure(ctx)
	}
	return exitOK
}
