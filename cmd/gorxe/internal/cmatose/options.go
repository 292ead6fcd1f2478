package cmatose

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"time"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
)

// Options are ucmatose's settings; ParseArgs fills them from a command line.
type Options struct {
	Server      netip.Addr // -s: the server to connect to; unset makes this process the server
	BindAddr    netip.Addr // -b: the local address (the server listens on it)
	Port        int        // -p
	Connections int        // -c
	Count       int        // -C: messages each way on each connection
	Size        int        // -S: bytes per message
	TOS         int        // -t: IP type of service of the client's connections; -1 leaves it 0
	AckTimeout  uint8      // -a: local ACK timeout exponent of the QPs (0: negotiated)
	Timeout     time.Duration
	// Common holds --bind, --pcap, --log-level, --metrics and --counters (gorxe only); the
	// counters include the connection manager agent's.
	Common tool.Common
	// Warnings are the C tool's notices about options it ignores, for the error stream.
	Warnings []string
}

// Defaults of the C tool.
const (
	DefaultPort        = 7471
	defaultConnections = 1
	defaultCount       = 10
	defaultSize        = 100
)

// Command is gorxe ucmatose.
var Command = tool.Command{
	Name:     "ucmatose",
	Synopsis: "gorxe ucmatose [-s server] [-b addr] [-c conns] [-C count] [-S size] [-p port] [-t tos] [-a timeout]",
	Summary:  "librdmacm ucmatose peer: RDMA-CM connections, SENDs each way, disconnect",
	Usage:    Usage,
	Parse: func(args []string) (tool.Run, error) {
		o, err := ParseArgs(args)
		return func(ctx context.Context, stdout, stderr io.Writer) error {
			for _, w := range o.Warnings {
				fmt.Fprintln(stderr, w)
			}
			return Run(ctx, o, stdout, stderr)
		}, err
	},
}

// ParseArgs parses ucmatose's command line (without the program name).
func ParseArgs(args []string) (Options, error) {
	o := Options{Port: DefaultPort, Connections: defaultConnections, Count: defaultCount, Size: defaultSize,
		TOS: -1, Timeout: 30 * time.Second, Common: tool.NewCommon()}
	var format, space string
	help := false
	opts := []getopt.Option{
		{Short: 's', Arg: true, Set: getopt.AddrOption(&o.Server)},
		{Short: 'b', Arg: true, Set: getopt.AddrOption(&o.BindAddr)},
		{Short: 'f', Arg: true, Set: getopt.StringOption(&format)},
		{Short: 'P', Arg: true, Set: getopt.StringOption(&space)},
		{Short: 'c', Arg: true, Set: getopt.IntOption(&o.Connections, 1, 1<<16)},
		{Short: 'C', Arg: true, Set: getopt.IntOption(&o.Count, 0, 1<<15-1)},
		{Short: 'S', Arg: true, Set: getopt.IntOption(&o.Size, 0, 1<<31-1)},
		{Short: 't', Arg: true, Set: getopt.IntOption(&o.TOS, 0, 255)},
		{Short: 'p', Arg: true, Set: getopt.IntOption(&o.Port, 1, 65535)},
		{Short: 'a', Arg: true, Set: ackTimeoutOption(&o.AckTimeout)},
		// -m moves the connections to a new event channel mid-run; gorxe has no event channels
		// to move, and the connections and the wire are the same.
		{Short: 'm', Set: getopt.FlagOption(new(bool))},
		{Short: 'h', Long: "help", Set: getopt.FlagOption(&help)},
		{Long: "timeout", Arg: true, Set: getopt.DurationOption(&o.Timeout)},
	}
	opts = append(opts, o.Common.Getopt()...)
	operands, err := getopt.Parse(args, opts)
	switch {
	case err != nil:
		return o, err
	case help:
		return o, tool.ErrHelp
	case len(operands) > 0:
		return o, &getopt.UsageError{Msg: fmt.Sprintf("unexpected operand %q", operands[0])}
	case format != "" && !strings.HasPrefix(strings.ToLower(format), "ip") && !strings.HasPrefix(strings.ToLower(format), "name"):
		return o, &getopt.UsageError{Msg: fmt.Sprintf("address format %q: gorxe connects over IP addresses only", format)}
	case strings.HasPrefix(strings.ToLower(space), "ib"):
		return o, &getopt.UsageError{Msg: fmt.Sprintf("port space %q: gorxe supports tcp only", space)}
	}
	if space != "" && !strings.HasPrefix(strings.ToLower(space), "tcp") {
		// ucmatose knows tcp and ib only; it warns about any other name (udp too) and stays in
		// the TCP port space.
		o.Warnings = append(o.Warnings, "Warning: unknown port space format")
	}
	if o.Size == 0 {
		o.Count = 0 // as the C tool: no message to send
	}
	return o, nil
}

// ackTimeoutOption reads -a, the ACK timeout exponent of rdma_set_option's
// RDMA_OPTION_ID_ACK_TIMEOUT (4.096 µs × 2^n, 5 bits).
func ackTimeoutOption(p *uint8) func(string) error {
	return func(s string) error {
		var v int
		if err := getopt.IntOption(&v, 0, 31)(s); err != nil {
			return err
		}
		*p = uint8(v)
		return nil
	}
}

// Usage prints the options.
func Usage(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format+"\n", a...) }
	p("Usage: gorxe ucmatose [-s server_address] [-b bind_address] [-c connections]")
	p("                      [-C message_count] [-S message_size] [-p port_number]")
	p("                      [-t type_of_service] [-a ack_timeout] [-f ip|name] [-P tcp] [-m]")
	p("  -s addr        connect to the server at addr (without -s: be the server)")
	p("  -b addr        local address (the server listens on it; default all)")
	p("  -c n           connections (default %d)", defaultConnections)
	p("  -C n           messages each way per connection (default %d)", defaultCount)
	p("  -S n           bytes per message (default %d)", defaultSize)
	p("  -p port        port (default %d)", DefaultPort)
	p("  -f ip|name     address format (IP addresses only)")
	p("  -P tcp         port space (tcp only; ib is refused, other names warn and use tcp)")
	p("  -t tos         IP type of service of the client's connections")
	p("  -a timeout     local ACK timeout of the QPs, 4.096 us x 2^timeout (0..31)")
	p("  -m             accepted, changes nothing on gorxe (event channel migration: gorxe has no")
	p("                 event channels to move)")
	p("  --timeout D    give up connecting after D (default 30s; 0: never)")
	p("")
	tool.Usage(w, "-b, else the route to -s")
	p("--metrics and --counters include the connection manager's counters: MADs by message,")
	p("retransmissions, drops.")
}
