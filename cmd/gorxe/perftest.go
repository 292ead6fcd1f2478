package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/gorxe/gorxe/internal/perftest"
)

func runWriteBW(args []string, stdout, stderr io.Writer) int {
	return runPerftest(perftest.Test{Verb: perftest.VerbWrite, Kind: perftest.BW}, args, stdout, stderr)
}

func runReadBW(args []string, stdout, stderr io.Writer) int {
	return runPerftest(perftest.Test{Verb: perftest.VerbRead, Kind: perftest.BW}, args, stdout, stderr)
}

func runSendBW(args []string, stdout, stderr io.Writer) int {
	return runPerftest(perftest.Test{Verb: perftest.VerbSend, Kind: perftest.BW}, args, stdout, stderr)
}

func runAtomicBW(args []string, stdout, stderr io.Writer) int {
	return runPerftest(perftest.Test{Verb: perftest.VerbAtomic, Kind: perftest.BW}, args, stdout, stderr)
}

func runWriteLat(args []string, stdout, stderr io.Writer) int {
	return runPerftest(perftest.Test{Verb: perftest.VerbWrite, Kind: perftest.Lat}, args, stdout, stderr)
}

func runReadLat(args []string, stdout, stderr io.Writer) int {
	return runPerftest(perftest.Test{Verb: perftest.VerbRead, Kind: perftest.Lat}, args, stdout, stderr)
}

func runSendLat(args []string, stdout, stderr io.Writer) int {
	return runPerftest(perftest.Test{Verb: perftest.VerbSend, Kind: perftest.Lat}, args, stdout, stderr)
}

func runAtomicLat(args []string, stdout, stderr io.Writer) int {
	return runPerftest(perftest.Test{Verb: perftest.VerbAtomic, Kind: perftest.Lat}, args, stdout, stderr)
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := perftest.Run(ctx, p, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "gorxe %s: %v\n", t.Name(), err)
		return exitFailure
	}
	return exitOK
}
