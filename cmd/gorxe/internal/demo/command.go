package demo

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/loglevel"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/observe"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/trace"
	"github.com/gorxe/gorxe/internal/devselect"
	"github.com/gorxe/gorxe/netio"
)

// Command is gorxe demo: two live gorxe devices on loopback doing RDMA, every step verified and
// shown as the packets it caused.
var Command = tool.Command{
	Name:     "demo",
	Synopsis: "gorxe demo [-faults SPEC] [-pcap FILE] [-trace OUT]",
	Summary:  "two live stacks on loopback doing RDMA, narrated packet by packet",
	Usage:    usage,
	Parse:    parse,
}

// flags are the demo's command line as package flag parses it (one dash or two).
type flags struct {
	faults, pcap, ladder, a, b, walk string
	port                             uint
	level                            slog.Level
}

func newFlagSet(f *flags, o *Options) *flag.FlagSet {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.faults, "faults", "", "impair both devices' traffic, e.g. loss=0.1 or loss=0.05,reorder=0.02,seed=7")
	fs.StringVar(&f.pcap, "pcap", "", "also write every packet to this pcapng `FILE` (default $"+devselect.EnvPcap+"), fault injection's doings as packet comments (gorxe dump and Wireshark read it)")
	fs.StringVar(&f.ladder, "trace", "", "also draw the run as a ladder diagram in `FILE`, SVG or HTML by its extension (as gorxe trace draws a capture)")
	fs.StringVar(&f.a, "a", "127.0.0.1", "address of device A")
	fs.StringVar(&f.b, "b", "127.0.0.2", "address of device B")
	fs.StringVar(&f.walk, "walkthrough", "", "instead of the demo, run the exchanges docs/wire-walkthrough.md explains and write each one's capture and ladder diagram into `DIR`")
	fs.UintVar(&f.port, "port", 0, "UDP port of both devices (default $"+devselect.EnvPort+", else 4791)")
	f.level = loglevel.Default
	fs.Func("log-level", loglevel.Help, loglevel.Option(&f.level))
	o.Observe.Flags(fs)
	return fs
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "Usage: gorxe demo [-faults SPEC] [-pcap FILE] [-trace OUT.svg|OUT.html] [-a ADDR] [-b ADDR] [-port N] [-log-level LEVEL]\n"+
		"                  [-metrics ADDR] [-counters]\n"+
		"       gorxe demo -walkthrough DIR [-a ADDR] [-b ADDR]\n\n"+
		"Runs two gorxe devices in this process on loopback and walks through RC SEND, RDMA WRITE,\n"+
		"RDMA READ, atomics, UC and UD, showing every packet on the wire. GORXE_FAULTS and GORXE_PORT work too.\n"+
		"Options take one dash or two.\n\n")
	var f flags
	fs := newFlagSet(&f, &Options{})
	fs.SetOutput(w)
	fs.PrintDefaults()
}

func usageErr(format string, a ...any) error {
	return &getopt.UsageError{Msg: fmt.Sprintf(format, a...)}
}

// parse reads the demo's command line; every mistake in it is a usage error.
func parse(args []string) (tool.Run, error) {
	var f flags
	var o Options
	fs := newFlagSet(&f, &o)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, tool.ErrHelp
		}
		return nil, usageErr("%v", err)
	}
	switch {
	case fs.NArg() != 0:
		return nil, usageErr("unexpected argument %q", fs.Arg(0))
	case f.walk != "" && (f.faults != "" || f.pcap != "" || f.ladder != "" || o.Observe != (observe.Options{})):
		return nil, usageErr("-walkthrough writes its own captures and diagrams, with no faults or metrics")
	}
	var err error
	if f.faults != "" {
		if o.Faults, err = netio.ParseFaultConfig(f.faults); err != nil {
			return nil, usageErr("-faults: %v", err)
		}
	}
	if o.A, err = netip.ParseAddr(f.a); err != nil {
		return nil, usageErr("-a: %v", err)
	}
	if o.B, err = netip.ParseAddr(f.b); err != nil {
		return nil, usageErr("-b: %v", err)
	}
	if f.port > 0xFFFF {
		return nil, usageErr("-port %d is not a UDP port", f.port)
	}
	o.Port = uint16(f.port)
	portSet := false
	fs.Visit(func(fl *flag.Flag) { portSet = portSet || fl.Name == "port" })
	if !portSet {
		if o.Port, err = gorxe.PortFromEnv(os.Getenv); err != nil {
			return nil, usageErr("%v", err)
		}
	}
	if f.pcap == "" && f.walk == "" {
		f.pcap = os.Getenv(devselect.EnvPcap) // as every tool does
	}
	if f.ladder != "" {
		if o.TraceFormat, err = ladderFormat(f.ladder); err != nil {
			return nil, usageErr("-trace: %v", err)
		}
	}
	return func(ctx context.Context, stdout, stderr io.Writer) error {
		o.Logger = loglevel.Logger(stderr, f.level)
		return runFiles(ctx, o, f.walk, f.pcap, f.ladder, stdout)
	}, nil
}

// runFiles creates the output files and runs the demo or the walkthrough.
func runFiles(ctx context.Context, o Options, walk, pcap, ladder string, stdout io.Writer) (err error) {
	var files []*os.File
	defer func() {
		for _, f := range files {
			err = errors.Join(err, f.Close())
		}
	}()
	for _, out := range []struct {
		name string
		w    *io.Writer
	}{{pcap, &o.Pcap}, {ladder, &o.Trace}} {
		if out.name == "" {
			continue
		}
		f, err := os.Create(out.name)
		if err != nil {
			return err
		}
		files = append(files, f)
		*out.w = f
	}
	if walk != "" {
		if err := Walkthrough(ctx, o, walk, stdout); err != nil {
			return fmt.Errorf("-walkthrough: %w", devselect.ExplainInUse(err, o.Port, "give it other addresses with -a and -b"))
		}
		return nil
	}
	return devselect.ExplainInUse(Run(ctx, o, stdout), o.Port, "give the demo other addresses with -a and -b, or another port with -port")
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
