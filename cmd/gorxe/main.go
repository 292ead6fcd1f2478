// Command gorxe is the gorxe tool: it runs the narrated demo, dumps RoCEv2 captures, is a
// drop-in peer of the rdma-core and perftest tools (rc_pingpong, write_bw, devinfo, ...), and
// runs C programs on gorxe's C library (exec). Each
// subcommand is a package under internal/ with its tool.Command; this file is their table.
package main

import (
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/cmatose"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/demo"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/launch"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/mckey"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/perftest"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/pingpong"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/rdmaexample"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/rping"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/stats"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tour"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/udaddy"
	"github.com/gorxe/gorxe/internal/devselect"
	"github.com/gorxe/gorxe/netio"
)

// The exit statuses, by the names the subcommands of this package use.
const (
	exitOK      = tool.ExitOK
	exitFailure = tool.ExitFailure
	exitUsage   = tool.ExitUsage
)

// commands lists the subcommands in the order help shows them.
var commands = []tool.Command{
	dumpCommand,
	traceCommand,
	demo.Command,
	tour.Command,
	pingpong.Command(pingpong.RC),
	pingpong.Command(pingpong.UC),
	pingpong.Command(pingpong.UD),
	pingpong.Command(pingpong.SRQ),
	rping.Command,
	cmatose.Command,
	mckey.Command,
	udaddy.Command,
	rdmaexample.Command(rdmaexample.Server),
	rdmaexample.Command(rdmaexample.Client),
	devinfoCommand,
	stats.Command,
	perftest.Command(perftest.Test{Verb: perftest.VerbWrite, Kind: perftest.BW}),
	perftest.Command(perftest.Test{Verb: perftest.VerbRead, Kind: perftest.BW}),
	perftest.Command(perftest.Test{Verb: perftest.VerbSend, Kind: perftest.BW}),
	perftest.Command(perftest.Test{Verb: perftest.VerbAtomic, Kind: perftest.BW}),
	perftest.Command(perftest.Test{Verb: perftest.VerbWrite, Kind: perftest.Lat}),
	perftest.Command(perftest.Test{Verb: perftest.VerbRead, Kind: perftest.Lat}),
	perftest.Command(perftest.Test{Verb: perftest.VerbSend, Kind: perftest.Lat}),
	perftest.Command(perftest.Test{Verb: perftest.VerbAtomic, Kind: perftest.Lat}),
	launch.Command,
	versionCommand,
}

// dumpCommand is gorxe dump, which parses its command line and reports on its own.
var dumpCommand = tool.Command{
	Name:     "dump",
	Synopsis: "gorxe dump [-json] [-v] FILE",
	Summary:  "print the RoCEv2 packets of a pcap or pcapng capture",
	Main:     runDump,
}

// environment lists the variables gorxe reads, for help.
var environment = []struct{ name, meaning string }{
	{devselect.EnvAddr, "interface or address the tools bind to without --bind or -d"},
	{devselect.EnvPort, "RoCEv2 UDP port instead of 4791; both peers must agree (kernel rxe uses 4791)"},
	{netio.EnvFaults, "impair outgoing datagrams, e.g. loss=0.2 or reorder=0.02,dup=0.01,seed=7"},
	{devselect.EnvPcap, "pcapng file of every datagram a tool sends and receives (as --pcap)"},
	{launch.EnvLib, "directory holding gorxe's libibverbs.so.1, for gorxe exec (as --lib)"},
}

func main() {
	launch.RunStage()
	os.Exit(Run(os.Args[1:], os.Stdout, os.Stderr))
}

// Run runs the gorxe command line args (without the program name) and returns the exit status.
func Run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) == 1 {
			usage(stdout)
			return exitOK
		}
		// gorxe help COMMAND is gorxe COMMAND -h.
		if c, ok := lookup(args[1]); ok && len(args) == 2 {
			return tool.Exec(c, []string{"-h"}, stdout, stderr)
		}
		fmt.Fprintf(stderr, "gorxe help: unknown command %q\n\n", args[1])
		usage(stderr)
		return exitUsage
	case "-version", "--version":
		args = append([]string{"version"}, args[1:]...)
	}
	c, ok := lookup(args[0])
	if !ok {
		fmt.Fprintf(stderr, "gorxe: unknown command %q\n\n", args[0])
		usage(stderr)
		return exitUsage
	}
	return tool.Exec(c, args[1:], stdout, stderr)
}

// lookup finds the command called name.
func lookup(name string) (tool.Command, bool) {
	i := slices.IndexFunc(commands, func(c tool.Command) bool { return c.Name == name })
	if i < 0 {
		return tool.Command{}, false
	}
	return commands[i], true
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "gorxe is a software RoCEv2 stack; this tool inspects and demonstrates it.\n\nUsage:\n\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-40s %s\n", c.Synopsis, c.Summary)
	}
	fmt.Fprintf(w, "  %-40s %s\n", "gorxe help [COMMAND]", "show this help, or a command's")
	fmt.Fprintf(w, "\nRun gorxe COMMAND -h (or gorxe help COMMAND) for a command's options; gorxe --version is\ngorxe version.\n\nEnvironment:\n\n")
	for _, e := range environment {
		fmt.Fprintf(w, "  %-14s %s\n", e.name, e.meaning)
	}
}
