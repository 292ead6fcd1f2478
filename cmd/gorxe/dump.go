package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/gorxe/gorxe/dump"
)

// runDump implements `gorxe dump`. It exits 0 when the capture was read to
// its end, even if some frames in it were bad (each is reported on stderr);
// 1 when the file cannot be opened, is not a capture, or is truncated (the
// frames before the cut are still printed); 2 for a bad command line.
func runDump(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dump", flag.ContinueOnError)
	fs.SetOutput(stderr)
	jsonOut := fs.Bool("json", false, "print one JSON object per packet")
	verbose := fs.Bool("v", false, "print every field of every header, explained")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `Usage: gorxe dump [-json] [-v] FILE

Prints the RoCEv2 packets in FILE, a pcap or pcapng capture (Ethernet, Linux
cooked or raw IP), one line each, and checks each packet's ICRC. Frames that
are not RoCEv2 are skipped; frames that cannot be decoded are reported on
stderr. Exit status: 0 if FILE was read, 1 if it could not be (missing, not
a capture, truncated), 2 for a bad command line.

`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() != 1 || (*jsonOut && *verbose) {
		fs.Usage()
		return exitUsage
	}
	format := dump.FormatLine
	switch {
	case *jsonOut:
		format = dump.FormatJSON
	case *verbose:
		format = dump.FormatVerbose
	}
	name := fs.Arg(0)
	f, err := os.Open(name)
	if err != nil {
		fmt.Fprintf(stderr, "gorxe: %v\n", err)
		return exitFailure
	}
	defer f.Close()
	if _, err := dump.Run(stdout, stderr, f, format); err != nil {
		fmt.Fprintf(stderr, "gorxe: %s: %v\n", name, err)
		return exitFailure
	}
	return exitOK
}
