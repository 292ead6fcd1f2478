package udaddy

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"time"

	"github.com/gorxe/gorxe/cm/mad"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
)

// Options are udaddy's settings; ParseArgs fills them from a command line.
type Options struct {
	Server       netip.Addr // -s: the server to resolve; unset makes this process the server
	BindAddr     netip.Addr // -b: the local address (the server listens on it)
	Connections  int        // -c
	Count        int        // -C: messages each way on each endpoint
	Size         int        // -S: bytes per message
	TrafficClass uint8      // -t: type of service
	Port         int        // --port: the C tool's port is fixed (gorxe only)
	Timeout      time.Duration
	// Common holds --bind, --pcap, --log-level, --metrics and --counters (gorxe only); the
	// counters include the connection manager agent's.
	Common tool.Common
}

// Defaults of the C tool. Its port is not an option.
const (
	DefaultPort        = 7174
	defaultConnections = 1
	defaultCount       = 10
	defaultSize        = 100
)

// Command is gorxe udaddy.
var Command = tool.Command{
	Name:     "udaddy",
	Synopsis: "gorxe udaddy [-s server] [-b addr] [-c conns] [-C count] [-S size] [-t tos] [-P udp]",
	Summary:  "librdmacm udaddy peer: UD endpoints resolved with SIDR, SENDs each way",
	Usage:    Usage,
	Parse: func(args []string) (tool.Run, error) {
		o, err := ParseArgs(args)
		return func(ctx context.Context, stdout, stderr io.Writer) error { return Run(ctx, o, stdout, stderr) }, err
	},
}

// ParseArgs parses udaddy's command line (without the program name).
func ParseArgs(args []string) (Options, error) {
	o := Options{Port: DefaultPort, Connections: defaultConnections, Count: defaultCount, Size: defaultSize,
		Timeout: 30 * time.Second, Common: tool.NewCommon()}
	var format, space, psNum string
	tos := -1
	help := false
	opts := []getopt.Option{
		{Short: 's', Arg: true, Set: getopt.AddrOption(&o.Server)},
		{Short: 'b', Arg: true, Set: getopt.AddrOption(&o.BindAddr)},
		{Short: 'f', Arg: true, Set: getopt.StringOption(&format)},
		{Short: 'P', Arg: true, Set: getopt.StringOption(&space)},
		{Short: 'p', Arg: true, Set: getopt.StringOption(&psNum)},
		{Short: 'c', Arg: true, Set: getopt.IntOption(&o.Connections, 1, 1<<16)},
		{Short: 'C', Arg: true, Set: getopt.IntOption(&o.Count, 0, 1<<15-1)},
		{Short: 'S', Arg: true, Set: getopt.IntOption(&o.Size, 0, 1<<31-1)},
		{Short: 't', Arg: true, Set: getopt.IntOption(&tos, 0, 255)},
		{Short: 'h', Long: "help", Set: getopt.FlagOption(&help)},
		{Long: "port", Arg: true, Set: getopt.IntOption(&o.Port, 1, 65535)},
		{Long: "timeout", Arg: true, Set: getopt.DurationOption(&o.Timeout)},
	}
	operands, err := getopt.Parse(args, append(opts, o.Common.Getopt()...))
	switch {
	case err != nil:
		return o, err
	case help:
		return o, tool.ErrHelp
	case len(operands) > 0:
		return o, &getopt.UsageError{Msg: fmt.Sprintf("unexpected operand %q", operands[0])}
	case format != "" && !strings.HasPrefix(strings.ToLower(format), "ip") && !strings.HasPrefix(strings.ToLower(format), "name"):
		return o, &getopt.UsageError{Msg: fmt.Sprintf("address format %q: gorxe resolves IP addresses only", format)}
	case space != "" && !strings.HasPrefix(strings.ToLower(space), "udp"):
		return o, &getopt.UsageError{Msg: fmt.Sprintf("port space %q: gorxe supports udp only", space)}
	}
	if psNum != "" {
		if n, err := getopt.ParseInt(psNum); err != nil || n != int64(mad.PortSpaceUDP) {
			return o, &getopt.UsageError{Msg: fmt.Sprintf("-p %s: gorxe supports port space %#x (UDP) only", psNum, int(mad.PortSpaceUDP))}
		}
	}
	if tos >= 0 {
		o.TrafficClass = uint8(tos)
	}
	if o.Size == 0 {
		o.Count = 0 // as the C tool: no message to send
	}
	return o, nil
}

// Usage prints the options.
func Usage(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format+"\n", a...) }
	p("Usage: gorxe udaddy [-s server_address] [-b bind_address] [-c connections]")
	p("                    [-C message_count] [-S message_size] [-t tos] [-P udp]")
	p("  -s addr        resolve the server at addr (without -s: be the server)")
	p("  -b addr        local address (the server listens on it; default all)")
	p("  -c n           endpoints (default %d)", defaultConnections)
	p("  -C n           messages each way per endpoint (default %d)", defaultCount)
	p("  -S n           bytes per message, at most the path MTU (default %d)", defaultSize)
	p("  -t tos         IP type of service of the messages")
	p("  -f ip|name     address format (IP addresses only)")
	p("  -P udp         port space (udp only); -p %#x is the same", int(mad.PortSpaceUDP))
	p("  --port n       port (default %d, fixed in the C tool)", DefaultPort)
	p("  --timeout D    give up resolving after D (default 30s; 0: never)")
	p("")
	tool.Usage(w, "-b, else the route to -s")
}
