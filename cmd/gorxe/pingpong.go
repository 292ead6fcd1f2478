package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/pingpong"
)

func runRCPingpong(args []string, stdout, stderr io.Writer) int {
	return runPingpong(pingpong.RC, args, stdout, stderr)
}

func runUCPingpong(args []string, stdout, stderr io.Writer) int {
	return runPingpong(pingpong.UC, args, stdout, stderr)
}

func runUDPingpong(args []string, stdout, stderr io.Writer) int {
	return runPingpong(pingpong.UD, args, stdout, stderr)
}

func runSRQPingpong(args []string, stdout, stderr io.Writer) int {
	return runPingpong(pingpong.SRQ, args, stdout, stderr)
}

// runPingpong runs one of the ibv_*_pingpong peers; errors are printed as one line, like the C
// tools' messages, and Ctrl-C ends a run cleanly.
func runPingpong(k pingpong.Kind, args []string, stdout, stderr io.Writer) int {
	o, err := pingpong.ParseArgs(k, args)
	switch {
	case errors.Is(err, pingpong.ErrHelp):
		pingpong.Usage(stdout, k)
		return exitOK
	case pingpong.IsUsage(err):
		fmt.Fprintf(stderr, "gorxe %s: %v\n", k.Name(), err)
		pingpong.Usage(stderr, k)
		return exitUsage
	case err != nil:
		fmt.Fprintln(stderr, err)
		return exitFailure
	}
	ctx, stop := interruptible()
	defer stop()
	if err := pingpong.Run(ctx, o, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, err)
		return failure(ctx)
	}
	return exitOK
}
