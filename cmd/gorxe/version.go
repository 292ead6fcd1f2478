package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
)

// version is the version the build stamps in (make build passes -ldflags "-X main.version=..."
// with git describe's answer); empty, the module's build information says it.
var version string

// versionCommand is gorxe version (and gorxe --version): the version of the binary and the Go
// toolchain that built it, so that a bug report says exactly what ran.
var versionCommand = tool.Command{
	Name:     "version",
	Synopsis: "gorxe version",
	Summary:  "print gorxe's version and the Go version that built it",
	Usage:    func(w io.Writer) { fmt.Fprintln(w, "Usage: gorxe version (or gorxe --version)") },
	Parse: func(args []string) (tool.Run, error) {
		switch {
		case len(args) == 1 && (args[0] == "-h" || args[0] == "--help"):
			return nil, tool.ErrHelp
		case len(args) != 0:
			return nil, &getopt.UsageError{Msg: fmt.Sprintf("unexpected argument %q", args[0])}
		}
		return func(_ context.Context, stdout, _ io.Writer) error {
			bi, ok := debug.ReadBuildInfo()
			_, err := fmt.Fprintln(stdout, versionLine(version, bi, ok))
			return err
		}, nil
	},
}

// versionLine formats the version: the stamped one, else the module version of the build
// information (a release's tag from go install, a pseudo-version of the commit from a build in a
// checkout), with the commit when the toolchain recorded it; then the Go version and platform.
// A build with neither (no VCS information, nothing stamped) says "devel".
func versionLine(stamped string, bi *debug.BuildInfo, ok bool) string {
	v, goVersion := stamped, runtime.Version()
	if ok {
		goVersion = bi.GoVersion
	}
	if v == "" && ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	if v == "" {
		v = "devel"
		if ok {
			var rev, modified string
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					rev = s.Value
				case "vcs.modified":
					modified = s.Value
				}
			}
			if rev != "" {
				v += " " + rev[:min(len(rev), 12)]
				if modified == "true" {
					v += "+modified"
				}
			}
		}
	}
	return fmt.Sprintf("gorxe %s %s %s/%s", v, goVersion, runtime.GOOS, runtime.GOARCH)
}
