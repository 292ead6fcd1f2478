package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/trace"
)

// traceCommand is gorxe trace: exit 0 when the diagram was written, 1 when the capture cannot be
// read or holds nothing to draw, 2 for a bad command line.
var traceCommand = tool.Command{
	Name:     "trace",
	Synopsis: "gorxe trace FILE [-o OUT.svg|OUT.html]",
	Summary:  "draw a capture as a ladder diagram, SVG or clickable HTML",
	Usage:    trace.Usage,
	Parse: func(args []string) (tool.Run, error) {
		o, err := trace.ParseArgs(args, io.Discard)
		switch {
		case errors.Is(err, tool.ErrHelp):
			return nil, err
		case err != nil:
			return nil, &getopt.UsageError{Msg: err.Error()}
		}
		return func(_ context.Context, stdout, stderr io.Writer) error {
			err := trace.Run(o, stdout, stderr)
			if _, named := errors.AsType[*fs.PathError](err); err != nil && !named {
				// What went wrong in the capture is said after its name; a file that cannot be
				// opened or created names itself.
				return fmt.Errorf("%s: %w", o.Input, err)
			}
			return err
		}, nil
	},
}
