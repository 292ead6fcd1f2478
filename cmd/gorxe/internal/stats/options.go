package stats

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
)

// Options are gorxe stats' settings.
type Options struct {
	URL      string        // the /metrics URL scraped
	Once     bool          // -once: print one snapshot and exit
	Interval time.Duration // -interval: between refreshes
	Top      int           // -top: QPs shown per device
	Clear    bool          // clear the screen before each refresh (the caller sets it for a terminal)
}

// ParseArgs parses gorxe stats' command line (without the command name); every error in it is a
// usage error.
func ParseArgs(args []string) (Options, error) {
	o, err := parseArgs(args)
	if err != nil && !errors.Is(err, tool.ErrHelp) {
		err = &getopt.UsageError{Msg: err.Error()}
	}
	return o, err
}

func parseArgs(args []string) (Options, error) {
	o := Options{}
	fs := flag.NewFlagSet("stats", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&o.Once, "once", false, "")
	fs.DurationVar(&o.Interval, "interval", time.Second, "")
	fs.IntVar(&o.Top, "top", 10, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, tool.ErrHelp
		}
		return o, err
	}
	switch {
	case fs.NArg() != 1:
		return o, errors.New("give the address of one running gorxe tool's --metrics")
	case o.Interval <= 0:
		return o, fmt.Errorf("-interval %v is not positive", o.Interval)
	case o.Top < 0:
		return o, fmt.Errorf("-top %d is negative", o.Top)
	}
	u, err := metricsURL(fs.Arg(0))
	if err != nil {
		return o, err
	}
	o.URL = u
	return o, nil
}

// metricsURL turns what the user typed into the URL to scrape: an address as --metrics took it
// (":9108" meaning this host) or a full URL; a URL without a path gets /metrics.
func metricsURL(s string) (string, error) {
	if !strings.Contains(s, "://") {
		if strings.HasPrefix(s, ":") {
			s = "127.0.0.1" + s
		}
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("%q is not an address or URL of a metrics endpoint", s)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/metrics"
	}
	return u.String(), nil
}

// Usage writes the help.
func Usage(w io.Writer) {
	fmt.Fprint(w, `Usage: gorxe stats [-once] [-interval DUR] [-top N] ADDR

Shows the counters of a running gorxe tool started with --metrics ADDR (a perftest or pingpong
peer, the demo): per device the non-zero counters by rxe name, with their rate per second after
the first refresh, and the busiest QPs by packets. ADDR is host:port (:port for this host) or the
URL of the /metrics endpoint.

  -once          print one snapshot and exit
  -interval DUR  time between refreshes (default 1s)
  -top N         QPs shown per device (default 10; 0: none)
`)
}
