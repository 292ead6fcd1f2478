package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// runVersion implements `gorxe version`: the module version of the binary and the Go toolchain
// that built it, so that a bug report says exactly what ran.
func runVersion(args []string, stdout, stderr io.Writer) int {
	if len(args) != 0 {
		fmt.Fprintln(stderr, "usage: gorxe version")
		return exitUsage
	}
	bi, ok := debug.ReadBuildInfo()
	fmt.Fprintln(stdout, versionLine(bi, ok))
	return exitOK
}

// versionLine formats the build information: the module version ("(devel)" for a build from a
// checkout, then the commit when the toolchain recorded it) and the Go version and platform.
func versionLine(bi *debug.BuildInfo, ok bool) string {
	version, goVersion := "unknown", runtime.Version()
	if ok {
		version, goVersion = bi.Main.Version, bi.GoVersion
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
			version += " " + rev[:min(len(rev), 12)]
			if modified == "true" {
				version += "+modified"
			}
		}
	}
	return fmt.Sprintf("gorxe %s %s %s/%s", version, goVersion, runtime.GOOS, runtime.GOARCH)
}
