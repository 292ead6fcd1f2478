package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/gorxe/gorxe/capture"
	"github.com/gorxe/gorxe/dump"
)

// stdin is what `gorxe dump -` reads; tests replace it.
var stdin io.Reader = os.Stdin

// runDump implements `gorxe dump`. It exits 0 when the capture was read to
// its end, even if some frames in it were bad (each is reported on stderr);
// 1 when the file cannot be opened, is not a capture, or is truncated (the
// frames before the cut are still printed); 2 for a bad command line.
func runDump(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dump", flag.ContinueOnError)
	fs.SetOutput(stderr)
	jsonOut := fs.Bool("json", false, "print one JSON object per packet")
	verbose := fs.Bool("v", false, "print every field of every header, explained")
	abs := fs.Bool("abs", false, "show each packet's absolute capture time (UTC) instead of seconds since the first frame")
	var opts dump.Options
	fs.Func("port", "also decode RoCEv2 on UDP `PORT`; repeat or separate with commas for several", func(s string) error {
		for p := range strings.SplitSeq(s, ",") {
			n, err := strconv.ParseUint(strings.TrimSpace(p), 10, 16)
			if err != nil || n == 0 {
				return fmt.Errorf("%q is not a UDP port", p)
			}
			opts.Ports = append(opts.Ports, uint16(n))
		}
		return nil
	})
	fs.Func("qp", "print only packets to queue pair `QPN` (or, for UD, from it); commas for several", func(s string) error {
		for q := range strings.SplitSeq(s, ",") {
			n, err := strconv.ParseUint(strings.TrimSpace(q), 0, 24)
			if err != nil {
				return fmt.Errorf("%q is not a 24-bit QP number", q)
			}
			opts.Filter.QPs = append(opts.Filter.QPs, uint32(n))
		}
		return nil
	})
	fs.Func("op", "print only packets with these `OPCODES` or connection manager messages: numbers or names, commas between (RC_SEND_ONLY, SEND_ONLY, SEND, ACKNOWLEDGE, 0x11; REQ, REP, RTU, REJ, DREQ, DREP, MRA, SIDR_REQ, SIDR_REP)", opts.Filter.AddOps)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `Usage: gorxe dump [-json | -v] [-abs] [-port PORT] [-qp QPN] [-op OPCODES] FILE|-

Prints the RoCEv2 packets in FILE, a pcap or pcapng capture (Ethernet, Linux
cooked or raw IP; "-" reads standard input), one line each with the seconds
since the capture's first frame, and checks each packet's ICRC. RoCEv2 is
decoded on UDP port 4791, on the ports given with -port, on those a pcapng
capture announces in a comment line such as %q, and on
any port a packet whose ICRC verifies was sent to (reported on stderr).
Frames that are not RoCEv2 are skipped; frames that cannot be decoded are reported on stderr, and so is a
capture without any RoCEv2 packet, with the UDP ports it holds instead.
MADs to QP1 are decoded too: the connection manager's messages (REQ, REP,
RTU, REJ, DREQ, DREP, ...) with their IDs on the line, their fields with -v,
and under Wireshark's field names ("infiniband.cm.req.localqpn") with -json;
-op selects them by name. Flags may come before or after FILE.
Exit status: 0 if FILE was read, 1 if it could not be (missing, not a
capture, truncated), 2 for a bad command line.

`, capture.PortComment(5000))
		fs.PrintDefaults()
	}
	// Flags may come before or after FILE, as trace takes them: the flag package stops at the
	// first argument that is not one, so parsing resumes after each.
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return exitOK
			}
			return exitUsage
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if *jsonOut && *verbose {
		fmt.Fprintln(stderr, `gorxe dump: -json and -v do not combine: -json already holds every header field, as numbers for programs, and -v explains the same fields in prose for people; choose one`)
		return exitUsage
	}
	if len(files) != 1 {
		if len(files) == 0 {
			fmt.Fprintln(stderr, `gorxe dump: no capture file given (name one, or "-" for standard input)`)
		} else {
			fmt.Fprintf(stderr, "gorxe dump: one capture file at a time, got %d: %s\n", len(files), strings.Join(files, " "))
		}
		fmt.Fprintln(stderr)
		fs.Usage()
		return exitUsage
	}
	switch {
	case *jsonOut:
		opts.Format = dump.FormatJSON
	case *verbose:
		opts.Format = dump.FormatVerbose
	}
	opts.Time = dump.TimeRelative
	opts.DetectPorts = true
	if *abs {
		opts.Time = dump.TimeAbsolute
	}
	name := files[0]
	in := stdin
	if name == "-" {
		name = "standard input"
	} else {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintf(stderr, "gorxe dump: %v\n", err)
			return exitFailure
		}
		defer f.Close()
		in = f
	}
	if _, err := dump.RunOptions(stdout, stderr, in, opts); err != nil {
		fmt.Fprintf(stderr, "gorxe dump: %s: %v\n", name, err)
		return exitFailure
	}
	return exitOK
}
