package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/rdmaexample"
)

// runRdmaServer runs the rdma_server peer.
func runRdmaServer(args []string, stdout, stderr io.Writer) int {
	return runRdmaExample(rdmaexample.Server, args, stdout, stderr)
}

// runRdmaClient runs the rdma_client peer.
func runRdmaClient(args []string, stdout, stderr io.Writer) int {
	return runRdmaExample(rdmaexample.Client, args, stdout, stderr)
}

// runRdmaExample runs one of librdmacm's example programs; errors are one line on stderr after
// the program's own lines.
func runRdmaExample(role rdmaexample.Role, args []string, stdout, stderr io.Writer) int {
	o, err := rdmaexample.ParseArgs(role, args)
	switch {
	case errors.Is(err, rdmaexample.ErrHelp):
		rdmaexample.Usage(role, stdout)
		return exitOK
	case errors.Is(err, getopt.ErrUsage):
		fmt.Fprintf(stderr, "gorxe %v: %v\n", role, err)
		rdmaexample.Usage(role, stderr)
		return exitUsage
	case err != nil:
		fmt.Fprintf(stderr, "gorxe %v: %v\n", role, err)
		return exitUsage
	}
	ctx, stop := interruptible()
	defer stop()
	if err := rdmaexample.Run(ctx, o, stdout); err != nil {
		fmt.Fprintf(stderr, "gorxe %v: %v\n", role, err)
		return failure(ctx)
	}
	return exitOK
}
