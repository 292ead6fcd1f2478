package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/mckey"
)

// runMckey runs the mckey peer; errors are one line on stderr after the tool's own status lines.
func runMckey(args []string, stdout, stderr io.Writer) int {
	o, err := mckey.ParseArgs(args)
	switch {
	case errors.Is(err, mckey.ErrHelp):
		mckey.Usage(stdout)
		return exitOK
	case errors.Is(err, getopt.ErrUsage):
		fmt.Fprintf(stderr, "gorxe mckey: %v\n", err)
		mckey.Usage(stderr)
		return exitUsage
	case err != nil:
		fmt.Fprintf(stderr, "gorxe mckey: %v\n", err)
		return exitUsage
	}
	ctx, stop := interruptible()
	defer stop()
	if err := mckey.Run(ctx, o, stdout); err != nil {
		fmt.Fprintf(stderr, "gorxe mckey: %v\n", err)
		return failure(ctx)
	}
	return exitOK
}
