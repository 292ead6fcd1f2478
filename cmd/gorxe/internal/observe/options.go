package observe

import (
	"flag"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
)

// Options are the tools' observability settings.
type Options struct {
	MetricsAddr string // --metrics: serve /metrics on this address while the tool runs ("": don't)
	Counters    bool   // --counters: print the non-zero counters at the end
}

// Getopt returns the options of tools parsed with getopt: --metrics=ADDR and --counters.
func (o *Options) Getopt() []getopt.Option {
	return []getopt.Option{
		{Long: "metrics", Arg: true, Set: getopt.StringOption(&o.MetricsAddr)},
		{Long: "counters", Set: getopt.FlagOption(&o.Counters)},
	}
}

// Flags adds -metrics and -counters to a tool parsed with package flag.
func (o *Options) Flags(fs *flag.FlagSet) {
	fs.StringVar(&o.MetricsAddr, "metrics", "", "serve the counters as Prometheus metrics on http://`ADDR`/metrics while running")
	fs.BoolVar(&o.Counters, "counters", false, Help[1].Text)
}

// Help describes the getopt form of the options, for the tools' usage texts, which lay them out
// in their own columns.
var Help = []struct{ Option, Text string }{
	{"--metrics=<addr>", "serve the counters as Prometheus metrics on http://<addr>/metrics while running (gorxe stats <addr> shows them)"},
	{"--counters", "print the non-zero counters at the end"},
}
