package rping

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"time"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/observe"
	"github.com/gorxe/gorxe/internal/devselect"
)

// Defaults and limits of the C tool.
const (
	DefaultPort = 7174
	DefaultSize = 64
	// MinSize is room for the message prefix with the largest ping number: the sizes, NULs
	// included, of "2147483647" and of the prefix's format string, as rping computes it.
	MinSize = 11 + 15
	// MaxSize is one less than rping's 64 KiB buffer.
	MaxSize = 64*1024 - 1
	// sqDepth and rqDepth are the QP's queues, as rping sizes them.
	sqDepth = 16
	rqDepth = 2
)

// Options are rping's settings; ParseArgs fills them from a command line.
type Options struct {
	Server, Client bool
	Addr           netip.Addr // -a: the server's address (server: the address to listen on)
	Source         netip.Addr // -I: the client's source address
	Port           int        // -p
	Count          int        // -C: pings; 0 is forever
	Size           int        // -S: bytes per ping
	Verbose        bool       // -v: print the ping data
	Validate       bool       // -V: compare what came back with what was sent
	Debug          bool       // -d: narrate each step
	Persistent     bool       // -P: the server serves connections until interrupted
	Bind           string     // --bind: the device's address (gorxe only)
	// Timeout bounds connection setup (gorxe only; 0: none). The ping loop itself waits as long
	// as the peer is connected, as rping does.
	Timeout time.Duration
	Observe observe.Options // --metrics, --counters (gorxe only): the device's and its CM agent's counters
}

// ErrHelp: -h was given; the caller prints the usage and succeeds.
var ErrHelp = errors.New("help requested")

// ParseArgs parses rping's command line (without the program name).
func ParseArgs(args []string) (Options, error) {
	o := Options{Port: DefaultPort, Size: DefaultSize, Timeout: 30 * time.Second}
	help, selfQP := false, false
	opts := []getopt.Option{
		{Short: 'a', Arg: true, Set: getopt.AddrOption(&o.Addr)},
		{Short: 'I', Arg: true, Set: getopt.AddrOption(&o.Source)},
		{Short: 'P', Set: getopt.FlagOption(&o.Persistent)},
		{Short: 'p', Arg: true, Set: getopt.IntOption(&o.Port, 1, 65535)},
		{Short: 'C', Arg: true, Set: getopt.IntOption(&o.Count, 0, 1<<31-1)},
		{Short: 'S', Arg: true, Set: sizeOption(&o.Size)},
		{Short: 's', Set: getopt.FlagOption(&o.Server)},
		{Short: 'c', Set: getopt.FlagOption(&o.Client)},
		{Short: 'v', Set: getopt.FlagOption(&o.Verbose)},
		{Short: 'V', Set: getopt.FlagOption(&o.Validate)},
		{Short: 'd', Set: getopt.FlagOption(&o.Debug)},
		// -q makes rping create and move its QP itself; the QP and the wire are the same.
		{Short: 'q', Set: getopt.FlagOption(&selfQP)},
		{Short: 'h', Long: "help", Set: getopt.FlagOption(&help)},
		{Long: "bind", Arg: true, Set: getopt.StringOption(&o.Bind)},
		{Long: "timeout", Arg: true, Set: getopt.DurationOption(&o.Timeout)},
	}
	opts = append(opts, o.Observe.Getopt()...)
	operands, err := getopt.Parse(args, opts)
	switch {
	case err != nil:
		return o, err
	case help:
		return o, ErrHelp
	case len(operands) > 0:
		return o, &getopt.UsageError{Msg: fmt.Sprintf("unexpected operand %q", operands[0])}
	case o.Server == o.Client:
		return o, &getopt.UsageError{Msg: "exactly one of -s and -c is required"}
	}
	if o.Client && !o.Addr.IsValid() {
		return o, &getopt.UsageError{Msg: "the client needs the server's address (-a)"}
	}
	return o, nil
}

// sizeOption checks -S against rping's range, with its message.
func sizeOption(p *int) func(string) error {
	return func(s string) error {
		v, err := getopt.ParseInt(s)
		if err != nil || v < MinSize || v > MaxSize {
			return &getopt.UsageError{Msg: fmt.Sprintf("Invalid size %s (valid range is %d to %d)", s, MinSize, MaxSize+1)}
		}
		*p = int(v)
		return nil
	}
}

// Usage prints the synopsis and options.
func Usage(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format+"\n", a...) }
	p("Usage:")
	p("  gorxe rping -s [-vVdP] [-S size] [-C count] [-a addr] [-p port]")
	p("  gorxe rping -c [-vVd] [-S size] [-C count] [-I addr] -a addr [-p port]")
	p("")
	p("Options:")
	p("  -s             server side; -a ::0 listens on every IPv6 address")
	p("  -c             client side")
	p("  -a addr        the server's address (server: the address to listen on, default all)")
	p("  -I addr        the client's source address")
	p("  -p port        port (default %d)", DefaultPort)
	p("  -S size        bytes per ping, %d to %d (default %d)", MinSize, MaxSize, DefaultSize)
	p("  -C count       number of pings (default 0: until interrupted)")
	p("  -v             print the ping data")
	p("  -V             validate the ping data")
	p("  -d             debug output")
	p("  -P             persistent server: serve connections until interrupted")
	p("  -q             accepted for compatibility (the QP is the same)")
	p("  --bind ADDR    the device's address (default: -a for the server, -I or the route to -a")
	p("                 for the client)")
	p("  --timeout D    give up connecting after D (default 30s; 0: never)")
	for _, h := range observe.Help {
		p("  %-14s %s", h.Option, h.Text)
	}
	p("                 (with the connection manager's counters: MADs by message, retransmissions, drops)")
	p("")
	p("$%s moves RoCE off UDP 4791 (both peers must agree).", devselect.EnvPort)
}
