package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/perftest"
)

// perftestCommand returns the subcommand that runs perftest's test of verb and kind.
func perftestCommand(verb perftest.Verb, kind perftest.Kind) func(args []string, stdout, stderr io.Writer) int {
	return func(args []string, stdout, stderr io.Writer) int {
		return runPerftest(perftest.Test{Verb: verb, Kind: kind}, args, stdout, stderr)
	}
}

// runPerftest runs one side of a perftest benchmark; errors are printed as one line, and Ctrl-C
// ends a run cleanly.
func runPerftest(t perftest.Test, args []string, stdout, stderr io.Writer) int {
	p, err := perftest.ParseArgs(t, args)
	switch {
	case errors.Is(err, perftest.ErrHelp):
		perftest.Usage(stdout, t)
		return exitOK
	case errors.Is(err, perftest.ErrVersion):
		fmt.Fprintf(stdout, "Version: %s\n", perftest.Version)
		return exitOK
	case perftest.IsUsage(err):
		fmt.Fprintf(stderr, "gorxe %s: %v\n", t.Name(), err)
		perftest.Usage(stderr, t)
		return exitUsage
	case err != nil:
		fmt.Fprintf(stderr, "gorxe %s: %v\n", t.Name(), err)
		return exitFailure
	}
	ctx, stop := interruptible()
	defer stop()
	if err := perftest.Run(ctx, p, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "gorxe %s: %v\n", t.Name(), err)
		return failure(ctx)
	}
	return exitOK
}
