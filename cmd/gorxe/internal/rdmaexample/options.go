package rdmaexample

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"time"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
)

// Role says which program runs.
type Role int

// Roles.
const (
	Server Role = iota // rdma_server: listen on -s (every address by default), answer one client
	Client             // rdma_client: connect to -s
)

func (r Role) String() string {
	if r == Server {
		return "rdma_server"
	}
	return "rdma_client"
}

// Options are the programs' settings; ParseArgs fills them from a command line.
type Options struct {
	Role Role
	// Server (-s) is the server's address: the one the client connects to, the one the server
	// listens on.
	Server  netip.Addr
	Port    int // -p
	Timeout time.Duration
	// Common holds --bind, --pcap, --log-level, --metrics and --counters (gorxe only); the
	// counters include the connection manager agent's.
	Common tool.Common
}

// Defaults of the C programs: the client connects to this host, the server listens on every
// address.
const (
	DefaultPort   = 7471
	defaultServer = "127.0.0.1"
	defaultListen = "0.0.0.0"
	// MessageSize is the size of the one message each way, sent inline.
	MessageSize = 16
)

// Command returns gorxe rdma_server or gorxe rdma_client.
func Command(role Role) tool.Command {
	c := tool.Command{
		Name:  role.String(),
		Usage: func(w io.Writer) { Usage(role, w) },
		Parse: func(args []string) (tool.Run, error) {
			o, err := ParseArgs(role, args)
			return func(ctx context.Context, stdout, stderr io.Writer) error { return Run(ctx, o, stdout, stderr) }, err
		},
	}
	if role == Server {
		c.Synopsis = "gorxe rdma_server [-s addr] [-p port]"
		c.Summary = "librdmacm rdma_server peer: accept one connection, one 16-byte SEND each way"
	} else {
		c.Synopsis = "gorxe rdma_client [-s server] [-p port]"
		c.Summary = "librdmacm rdma_client peer: connect, one 16-byte SEND each way"
	}
	return c
}

// ParseArgs parses the command line of role (without the program name).
func ParseArgs(role Role, args []string) (Options, error) {
	o := Options{Role: role, Port: DefaultPort, Server: netip.MustParseAddr(defaultServer), Timeout: 30 * time.Second,
		Common: tool.NewCommon()}
	if role == Server {
		o.Server = netip.MustParseAddr(defaultListen)
	}
	help := false
	opts := []getopt.Option{
		{Short: 's', Arg: true, Set: getopt.AddrOption(&o.Server)},
		{Short: 'p', Arg: true, Set: getopt.IntOption(&o.Port, 1, 65535)},
		{Short: 'h', Long: "help", Set: getopt.FlagOption(&help)},
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
	}
	return o, nil
}

// Usage prints the options of role.
func Usage(role Role, w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format+"\n", a...) }
	if role == Server {
		p("Usage: gorxe rdma_server [-s server_address] [-p port_number]")
		p("  -s addr        the address to listen on (default %s: every address of the device)", defaultListen)
		p("  -p port        port (default %d)", DefaultPort)
		p("")
		tool.Usage(w, "-s, else $GORXE_ADDR, else the first interface")
		return
	}
	p("Usage: gorxe rdma_client [-s server_address] [-p port_number]")
	p("  -s addr        the server (default %s)", defaultServer)
	p("  -p port        port (default %d)", DefaultPort)
	p("  --timeout D    give up connecting after D (default 30s; 0: never)")
	p("")
	tool.Usage(w, "the route to -s")
}
