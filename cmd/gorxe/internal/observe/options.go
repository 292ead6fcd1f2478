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
	fs.StringVar(&o.MetricsAddr, "metrics", "", metricsHelp)
	fs.BoolVar(&o.Counters, "counters", false, countersHelp)
}

const (
	metricsHelp  = "serve the devices' counters as Prometheus metrics on http://ADDR/metrics while running (gorxe stats ADDR shows them)"
	countersHelp = "print the devices' non-zero counters at the end"
)

// UsageLines are the help lines of the getopt form, in the layout of the tools' usage texts.
var UsageLines = []string{
	"      --metrics=<addr>  " + metricsHelp,
	"      --counters  " + countersHelp,
}
