package cmatose

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"time"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/observe"
)

// Options are ucmatose's settings; ParseArgs fills them from a command line.
type Options struct {
	Server      netip.Addr // -s: the server to connect to; unset makes this process the server
	BindAddr    netip.Addr // -b: the local address (the server listens on it)
	Port        int        // -p
	Connections int        // -c
	Count       int        // -C: messages each way on each connection
	Size        int        // -S: bytes per message
	Bind        string     // --bind: the device's address (gorxe only)
	Timeout     time.Duration
	Observe     observe.Options // --metrics, --counters (gorxe only): the device's and its CM agent's counters
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

// ErrHelp: -h was given; the caller prints the usage and succeeds.
var ErrHelp = errors.New("help requested")

// ParseArgs parses ucmatose's command line (without the program name).
func ParseArgs(args []string) (Options, error) {
	o := Options{Port: DefaultPort, Connections: defaultConnections, Count: defaultCount, Size: defaultSize,
		Timeout: 30 * time.Second}
	var format, space, tos string
	help, migrate := false, false
	opts := []getopt.Option{
		{Short: 's', Arg: true, Set: getopt.AddrOption(&o.Server)},
		{Short: 'b', Arg: true, Set: getopt.AddrOption(&o.BindAddr)},
		{Short: 'f', Arg: true, Set: getopt.StringOption(&format)},
		{Short: 'P', Arg: true, Set: getopt.StringOption(&space)},
		{Short: 'c', Arg: true, Set: getopt.IntOption(&o.Connections, 1, 1<<16)},
		{Short: 'C', Arg: true, Set: getopt.IntOption(&o.Count, 0, 1<<15-1)},
		{Short: 'S', Arg: true, Set: getopt.IntOption(&o.Size, 0, 1<<31-1)},
		{Short: 't', Arg: true, Set: getopt.StringOption(&tos)},
		{Short: 'p', Arg: true, Set: getopt.IntOption(&o.Port, 1, 65535)},
		{Short: 'm', Set: getopt.FlagOption(&migrate)},
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
	case format != "" && !strings.HasPrefix(strings.ToLower(format), "ip") && !strings.HasPrefix(strings.ToLower(format), "name"):
		return o, &getopt.UsageError{Msg: fmt.Sprintf("address format %q: gorxe connects over IP addresses only", format)}
	case strings.HasPrefix(strings.ToLower(space), "ib"):
		return o, &getopt.UsageError{Msg: fmt.Sprintf("port space %q: gorxe supports tcp only", space)}
	case tos != "":
		return o, &getopt.UsageError{Msg: "-t (type of service) is not supported"}
	case migrate:
		return o, &getopt.UsageError{Msg: "-m (event channel migration) has no meaning without event channels"}
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

// Usage prints the options.
func Usage(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format+"\n", a...) }
	p("Usage: gorxe ucmatose [-s server_address] [-b bind_address] [-c connections]")
	p("                      [-C message_count] [-S message_size] [-p port_number]")
	p("  -s addr        connect to the server at addr (without -s: be the server)")
	p("  -b addr        local address (the server listens on it; default all)")
	p("  -c n           connections (default %d)", defaultConnections)
	p("  -C n           messages each way per connection (default %d)", defaultCount)
	p("  -S n           bytes per message (default %d)", defaultSize)
	p("  -p port        port (default %d)", DefaultPort)
	p("  -f ip|name     address format (IP addresses only)")
	p("  -P tcp         port space (tcp only; ib is refused, other names warn and use tcp)")
	p("  --bind ADDR    the device's address (default: -b, else the route to -s)")
	p("  --timeout D    give up connecting after D (default 30s; 0: never)")
	for _, h := range observe.Help {
		p("  %-14s %s", h.Option, h.Text)
	}
	p("                 (with the connection manager's counters: MADs by message, retransmissions, drops)")
}
