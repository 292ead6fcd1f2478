package rdmaexample

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"time"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
)

// Role says which program runs.
type Role int

// Roles.
const (
	Server Role = iota // rdma_server: listen on every address, answer one client
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
	Role    Role
	Server  netip.Addr // -s (rdma_client only)
	Port    int        // -p
	Bind    string     // --bind: the device's address (gorxe only; the C server takes none)
	Timeout time.Duration
}

// Defaults of the C programs.
const (
	DefaultPort   = 7471
	defaultServer = "127.0.0.1"
	// MessageSize is the size of the one message each way, sent inline.
	MessageSize = 16
)

// ErrHelp: -h was given; the caller prints the usage and succeeds.
var ErrHelp = errors.New("help requested")

// ParseArgs parses the command line of role (without the program name).
func ParseArgs(role Role, args []string) (Options, error) {
	o := Options{Role: role, Port: DefaultPort, Server: netip.MustParseAddr(defaultServer), Timeout: 30 * time.Second}
	help := false
	opts := []getopt.Option{
		{Short: 'p', Arg: true, Set: getopt.IntOption(&o.Port, 1, 65535)},
		{Short: 'h', Long: "help", Set: getopt.FlagOption(&help)},
		{Long: "bind", Arg: true, Set: getopt.StringOption(&o.Bind)},
		{Long: "timeout", Arg: true, Set: getopt.DurationOption(&o.Timeout)},
	}
	if role == Client {
		opts = append(opts, getopt.Option{Short: 's', Arg: true, Set: getopt.AddrOption(&o.Server)})
	}
	operands, err := getopt.Parse(args, opts)
	switch {
	case err != nil:
		return o, err
	case help:
		return o, ErrHelp
	case len(operands) > 0:
		return o, &getopt.UsageError{Msg: fmt.Sprintf("unexpected operand %q", operands[0])}
	}
	return o, nil
}

// Usage prints the options of role.
func Usage(role Role, w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format+"\n", a...) }
	if role == Server {
		p("Usage: gorxe rdma_server [-p port_number] [--bind ADDR]")
		p("  -p port        port (default %d)", DefaultPort)
		p("  --bind ADDR    the device's address (default: GORXE_ADDR, else the first interface);")
		p("                 the server listens on every address of the device")
		return
	}
	p("Usage: gorxe rdma_client [-s server_address] [-p port_number]")
	p("  -s addr        the server (default %s)", defaultServer)
	p("  -p port        port (default %d)", DefaultPort)
	p("  --bind ADDR    the device's address (default: the route to -s)")
	p("  --timeout D    give up connecting after D (default 30s; 0: never)")
}
