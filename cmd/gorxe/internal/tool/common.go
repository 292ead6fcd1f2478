package tool

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/loglevel"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/observe"
	"github.com/gorxe/gorxe/internal/devselect"
	"github.com/gorxe/gorxe/netio"
)

// Common are the options of every tool that opens a device, on top of its C tool's: where the
// device binds, what it captures and logs, and how it is observed.
type Common struct {
	Bind     string          // --bind: exactly this local address ("": the tool's own choice)
	Pcap     string          // --pcap: capture file ("": $GORXE_PCAP, else none)
	LogLevel slog.Level      // --log-level: the least severe device event logged on stderr
	Observe  observe.Options // --metrics, --counters
}

// NewCommon returns the common options' defaults.
func NewCommon() Common { return Common{LogLevel: loglevel.Default} }

// Getopt returns the common options for a getopt command line.
func (c *Common) Getopt() []getopt.Option {
	return append([]getopt.Option{
		{Long: "bind", Arg: true, Set: getopt.StringOption(&c.Bind)},
		{Long: "pcap", Arg: true, Set: getopt.StringOption(&c.Pcap)},
		{Long: "log-level", Arg: true, Set: loglevel.Option(&c.LogLevel)},
	}, c.Observe.Getopt()...)
}

// commonHelp are the lines Usage writes, without the --bind line each tool words itself.
var commonHelp = []struct{ option, text string }{
	{"--pcap=<file>", "write every datagram the device sends and receives to this pcapng file (default $" + devselect.EnvPcap + ")"},
	{"--log-level=<lvl>", loglevel.Help},
	{"--metrics=<addr>", observe.Help[0].Text},
	{"--counters", observe.Help[1].Text},
}

// Usage writes the common options' part of a tool's help: bind says where the device binds
// without --bind.
func Usage(w io.Writer, bind string) {
	fmt.Fprintf(w, "gorxe options, as for every tool that opens a device:\n")
	fmt.Fprintf(w, "      %-19s %s\n", "--bind=<addr>", "the device's one local address (default: "+bind+")")
	for _, h := range commonHelp {
		fmt.Fprintf(w, "      %-19s %s\n", h.option, h.text)
	}
	fmt.Fprintf(w, "$%s impairs the device's outgoing datagrams (e.g. loss=0.05); $%s moves RoCE off UDP\n", netio.EnvFaults, devselect.EnvPort)
	fmt.Fprintf(w, "4791 (both peers must agree; kernel rxe always uses 4791).\n")
}
