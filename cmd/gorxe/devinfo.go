package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/devinfo"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
)

// runDevinfo is the peer of ibv_devinfo.
func runDevinfo(args []string, stdout, stderr io.Writer) int {
	o, err := devinfo.ParseArgs(args)
	switch {
	case errors.Is(err, devinfo.ErrHelp):
		devinfo.Usage(stdout)
		return exitOK
	case errors.Is(err, getopt.ErrUsage):
		fmt.Fprintf(stderr, "gorxe devinfo: %v\n", err)
		devinfo.Usage(stderr)
		return exitUsage
	}
	if err := devinfo.Run(o, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, err)
		return exitFailure
	}
	return exitOK
}
