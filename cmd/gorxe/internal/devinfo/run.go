package devinfo

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/loglevel"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
	"github.com/gorxe/gorxe/internal/devselect"
)

// Options are ibv_devinfo's settings, plus gorxe's --bind and --log-level.
type Options struct {
	IBDev    string     // -d: interface, address or gorxe device name
	Bind     string     // --bind: one local address
	IBPort   int        // -i: only this port (0: all)
	List     bool       // -l: print the device names only
	Verbose  bool       // -v: every attribute, the GID table, and where the counters are
	LogLevel slog.Level // --log-level: the least severe device event logged on stderr
}

// ParseArgs parses ibv_devinfo's command line.
func ParseArgs(args []string) (Options, error) {
	o := Options{LogLevel: loglevel.Default}
	help := false
	operands, err := getopt.Parse(args, []getopt.Option{
		{Short: 'd', Long: "ib-dev", Arg: true, Set: getopt.StringOption(&o.IBDev)},
		{Short: 'i', Long: "ib-port", Arg: true, Set: getopt.IntOption(&o.IBPort, 1, 255)},
		{Short: 'l', Long: "list", Set: getopt.FlagOption(&o.List)},
		{Short: 'v', Long: "verbose", Set: getopt.FlagOption(&o.Verbose)},
		{Short: 'h', Long: "help", Set: getopt.FlagOption(&help)},
		{Long: "bind", Arg: true, Set: getopt.StringOption(&o.Bind)},
		{Long: "log-level", Arg: true, Set: loglevel.Option(&o.LogLevel)},
	})
	switch {
	case err != nil:
		return o, err
	case help:
		return o, tool.ErrHelp
	case len(operands) > 0:
		return o, &getopt.UsageError{Msg: fmt.Sprintf("unexpected argument %q", operands[0])}
	}
	return o, nil
}

// Usage writes the help.
func Usage(w io.Writer) {
	fmt.Fprint(w, `Usage: gorxe devinfo             print the ca attributes

Options:
  -d, --ib-dev=<dev>     only this device: interface name, local address or gorxe_<name>
  -i, --ib-port=<port>   only this port (default all ports)
  -l, --list             print the device names only
  -v, --verbose          print every attribute, the GID table, and where the counters are
      --bind=<addr>      only the device bound to this one local address
      --log-level=<lvl>  `+loglevel.Help+`

gorxe has a device per network interface that is up and has an address (gorxe_<interface>),
and one per local address named with -d or --bind. Without -d, --bind or $`+devselect.EnvAddr+`, every
interface's device is shown. A gorxe device lives in the process that opens it, so devinfo
shows a device of its own, which opens no socket, and no counters: a running tool prints its
device's counters with --counters when it ends, and serves them with --metrics ADDR, which
gorxe stats ADDR shows while it runs.
`)
}

// Run prints what the options ask for on stdout; the devices log their events on stderr.
func Run(o Options, stdout, stderr io.Writer) error {
	if o.List {
		names := devselect.DeviceNames()
		s := "s"
		if len(names) == 1 {
			s = ""
		}
		fmt.Fprintf(stdout, "%d HCA%s found:\n", len(names), s)
		for _, n := range names {
			fmt.Fprintf(stdout, "\t%s\n", n)
		}
		fmt.Fprintln(stdout)
		return nil
	}
	// Every device would fail the same way on a bad GORXE_PORT: say it once.
	if _, err := gorxe.PortFromEnv(os.Getenv); err != nil {
		return err
	}
	var cfgs []gorxe.Config
	if o.Bind != "" || o.IBDev != "" || os.Getenv(devselect.EnvAddr) != "" {
		cfg, err := devselect.Selection{Bind: o.Bind, Device: o.IBDev}.Config(os.Getenv)
		if errors.Is(err, devselect.ErrDeviceNotFound) && o.IBDev != "" {
			return fmt.Errorf("IB device '%s' wasn't found", o.IBDev)
		}
		if err != nil {
			return err
		}
		cfgs = append(cfgs, cfg)
	} else {
		for _, n := range devselect.Interfaces() {
			cfgs = append(cfgs, gorxe.Config{Interface: n})
		}
		if len(cfgs) == 0 {
			return errors.New("No IB devices found")
		}
	}
	var errs []error
	log := loglevel.Logger(stderr, o.LogLevel)
	for _, cfg := range cfgs {
		cfg.Logger = log
		if err := show(stdout, cfg, o); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// show opens the device of cfg without binding a UDP port (a pingpong or perftest run may hold
// the port already), and prints it.
func show(w io.Writer, cfg gorxe.Config, o Options) error {
	dev, err := devselect.OpenUnbound(cfg)
	if err != nil {
		return fmt.Errorf("Failed to open device: %w", err)
	}
	defer dev.Close()
	return Print(w, dev, o.IBPort, o.Verbose)
}
