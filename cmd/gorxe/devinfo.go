package main

import (
	"context"
	"io"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/devinfo"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
)

// devinfoCommand is the peer of ibv_devinfo.
var devinfoCommand = tool.Command{
	Name:     "devinfo",
	Synopsis: "gorxe devinfo [-v] [-l] [-d DEV] [-i PORT]",
	Summary:  "ibv_devinfo peer: devices, ports and GID tables",
	Usage:    devinfo.Usage,
	Parse: func(args []string) (tool.Run, error) {
		o, err := devinfo.ParseArgs(args)
		return func(_ context.Context, stdout, stderr io.Writer) error { return devinfo.Run(o, stdout, stderr) }, err
	},
}
