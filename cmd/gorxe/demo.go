package main

import (
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/demo"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/loglevel"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/observe"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/trace"
	"github.com/gorxe/gorxe/internal/devselect"
	"github.com/gorxe/gorxe/netio"
)

// runDemo implements `gorxe demo`: two live gorxe devices on loopback doing RDMA, every step
// verified and shown as the packets it caused.
func runDemo(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	faults := fs.String("faults", "", "impair both devices' traffic, e.g. loss=0.1 or loss=0.05,reorder=0.02,seed=7")
	pcap := fs.String("pcap", "", "also write every packet to this pcapng `FILE` (default $GORXE_PCAP), fault injection's doings as packet comments (gorxe dump and Wireshark read it)")
	ladder := fs.String("trace", "", "also draw the run as a ladder diagram in `FILE`, SVG or HTML by its extension (as gorxe trace draws a capture)")
	a := fs.String("a", "127.0.0.1", "address of device A")
	b := fs.String("b", "127.0.0.2", "address of device B")
	walk := fs.String("walkthrough", "", "instead of the demo, run the exchanges docs/wire-walkthrough.md explains and write each one's capture and ladder diagram into `DIR`")
	port := fs.Uint("port", 0, "UDP port of both devices (default $GORXE_PORT, else 4791)")
	level := loglevel.Default
	fs.Func("log-level", loglevel.Help, loglevel.Option(&level))
	var o demo.Options
	o.Observe.Flags(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: gorxe demo [-faults SPEC] [-pcap FILE] [-trace OUT.svg|OUT.html] [-a ADDR] [-b ADDR] [-port N] [-log-level LEVEL]\n"+
			"                  [-metrics ADDR] [-counters]\n"+
			"       gorxe demo -walkthrough DIR [-a ADDR] [-b ADDR]\n\n"+
			"Runs two gorxe devices in this process on loopback and walks through RC SEND, RDMA WRITE,\n"+
			"RDMA READ, atomics, UC and UD, showing every packet on the wire. GORXE_FAULTS and GORXE_PORT work too.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() != 0 || *walk != "" && (*faults != "" || *pcap != "" || *ladder != "" || o.Observe != (observe.Options{})) {
		fs.Usage()
		return exitUsage
	}
	o.Logger = loglevel.Logger(stderr, level)
	var err error
	if *faults != "" {
		if o.Faults, err = netio.ParseFaultConfig(*faults); err != nil {
			fmt.Fprintf(stderr, "gorxe demo: -faults: %v\n", err)
			return exitUsage
		}
	}
	if o.A, err = netip.ParseAddr(*a); err != nil {
		fmt.Fprintf(stderr, "gorxe demo: -a: %v\n", err)
		return exitUsage
	}
	if o.B, err = netip.ParseAddr(*b); err != nil {
		fmt.Fprintf(stderr, "gorxe demo: -b: %v\n", err)
		return exitUsage
	}
	if *port > 0xFFFF {
		fmt.Fprintf(stderr, "gorxe demo: -port %d is not a UDP port\n", *port)
		return exitUsage
	}
	o.Port = uint16(*port)
	if !flagSet(fs, "port") {
		if o.Port, err = devselect.PortFromEnv(os.Getenv); err != nil {
			fmt.Fprintf(stderr, "gorxe demo: %v\n", err)
			return exitUsage
		}
	}
	if *pcap == "" && *walk == "" {
		*pcap = os.Getenv(devselect.EnvPcap) // as every tool does
	}
	if *ladder != "" {
		if o.TraceFormat, err = ladderFormat(*ladder); err != nil {
			fmt.Fprintf(stderr, "gorxe demo: -trace: %v\n", err)
			return exitUsage
		}
	}
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	create := func(name string) (*os.File, bool) {
		f, err := os.Create(name)
		if err != nil {
			fmt.Fprintf(stderr, "gorxe demo: %v\n", err)
			return nil, false
		}
		files = append(files, f)
		return f, true
	}
	if *pcap != "" {
		f, ok := create(*pcap)
		if !ok {
			return exitFailure
		}
		o.Pcap = f
	}
	if *ladder != "" {
		f, ok := create(*ladder)
		if !ok {
			return exitFailure
		}
		o.Trace = f
	}
	ctx, stop := interruptible()
	defer stop()
	if *walk != "" {
		if err := demo.Walkthrough(ctx, o, *walk, stdout); err != nil {
			fmt.Fprintf(stderr, "gorxe demo: -walkthrough: %v\n", devselect.ExplainInUse(err, o.Port, "give it other addresses with -a and -b"))
			return failure(ctx)
		}
		return exitOK
	}
	if err := demo.Run(ctx, o, stdout); err != nil {
		err = devselect.ExplainInUse(err, o.Port, "give the demo other addresses with -a and -b, or another port with -port")
		fmt.Fprintf(stderr, "gorxe demo: %v\n", err)
		return failure(ctx)
	}
	for _, f := range files {
		if err := f.Close(); err != nil {
			fmt.Fprintf(stderr, "gorxe demo: %v\n", err)
			return exitFailure
		}
	}
	files = nil
	return exitOK
}

// ladderFormat picks the ladder diagram's format by the file's extension, as gorxe trace -o does.
func ladderFormat(name string) (trace.Format, error) {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".svg":
		return trace.FormatSVG, nil
	case ".html", ".htm":
		return trace.FormatHTML, nil
	}
	return 0, trace.ErrOutputFormat
}

// flagSet reports whether the command line set the flag name.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
