package launch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
	"github.com/gorxe/gorxe/internal/devselect"
)

// Command is gorxe exec.
var Command = tool.Command{
	Name:     "exec",
	Synopsis: "gorxe exec [--addr ADDR] [--sysfs MODE] -- CMD [ARG...]",
	Summary:  "run a C RDMA program (ib_write_bw, rping, ...) on gorxe",
	Usage:    Usage,
	Execs:    true,
	Parse: func(args []string) (tool.Run, error) {
		o, err := parseArgs(args)
		return func(context.Context, io.Writer, io.Writer) error { return o.exec() }, err
	},
}

// options are gorxe exec's command line.
type options struct {
	addr  string   // --addr: GORXE_ADDR for the program ("": the environment's, if any)
	lib   string   // --lib: the library's directory ("": GORXE_LIB, else the usual places)
	sysfs string   // --sysfs: whether the program gets the device view (sysfsAuto, sysfsOn, sysfsOff)
	argv  []string // the program and its arguments
}

// The values of --sysfs.
const (
	sysfsAuto = "auto" // the device view where the machine allows it, else none
	sysfsOn   = "on"   // the device view, or gorxe exec fails
	sysfsOff  = "off"  // no device view: gorxe exec becomes the program
)

// parseArgs parses the arguments after exec. The options end at the program's name (or at
// "--"), so the program's own options are its own.
func parseArgs(args []string) (options, error) {
	o := options{sysfs: sysfsAuto}
	help := false
	nonEmpty := func(p *string, what string) func(string) error {
		return func(s string) error {
			if s == "" {
				return errors.New("empty: give " + what)
			}
			*p = s
			return nil
		}
	}
	argv, err := getopt.ParseInOrder(args, []getopt.Option{
		{Long: "addr", Arg: true, Set: nonEmpty(&o.addr, "an interface name or an address")},
		{Long: "lib", Arg: true, Set: nonEmpty(&o.lib, "a directory")},
		{Long: "sysfs", Arg: true, Set: func(s string) error {
			if s != sysfsAuto && s != sysfsOn && s != sysfsOff {
				return errors.New("give auto, on or off")
			}
			o.sysfs = s
			return nil
		}},
		{Short: 'h', Long: "help", Set: getopt.FlagOption(&help)},
	})
	switch {
	case err != nil:
		return o, err
	case help:
		return o, tool.ErrHelp
	case len(argv) == 0:
		return o, &getopt.UsageError{Msg: "no program to run"}
	}
	o.argv = argv
	return o, nil
}

// Usage writes gorxe exec's help.
func Usage(w io.Writer) {
	fmt.Fprintf(w, `Usage: gorxe exec [--addr IFACE|ADDR] [--lib DIR] [--sysfs MODE] [--] CMD [ARG...]

Runs CMD, an unmodified program built against libibverbs or librdmacm (ibv_devinfo, ib_write_bw,
rping, ...), on gorxe: it puts gorxe's libibverbs.so.1 and librdmacm.so.1 first on
LD_LIBRARY_PATH, ahead of the directories already there, and sets $%[1]s. CMD is looked up on
$PATH as a shell does.

Where the machine allows it (as root, or where unprivileged user namespaces are enabled), CMD
also gets a device view, for programs that read an RDMA device's files instead of asking the
library (UCX, rdma-core's RDMA-CM tests): in a mount namespace of its own (for a user other than
root, inside a user namespace where their ids are themselves), /sys/class/infiniband/<dev> and
/sys/class/infiniband_verbs/uverbsN describe the devices the library lists (GUIDs, port state,
GID table, device/net/<iface>), and /dev/infiniband/uverbsN and rdma_cm exist (character
devices: the null device bound over them, as programs such as UCX check); the
rest of /sys/class and /dev is as before. gorxe exec then waits for CMD, passes on SIGTERM,
SIGHUP, SIGUSR1 and SIGUSR2, and exits as CMD did. Without the view (--sysfs=off, or where the
machine refuses it) gorxe exec becomes CMD (execve), so that CMD's pid is its own; everything
that goes through the library works the same.

Options (they end at CMD or at --; what follows CMD is CMD's):
  --addr=<iface|addr>  the interface or local address CMD's device binds to, as $%[1]s takes
                       them (default: $%[1]s if set, else one device per interface that is up
                       and has an address)
  --lib=<dir>          the directory holding gorxe's libibverbs.so.1 (default: $%[2]s, else the
                       first of these that holds it: ../build/clib and ../lib/gorxe from the
                       directory of the gorxe executable, and build/clib of the gorxe source
                       tree the current directory is in; make clib writes build/clib)
  --sysfs=<mode>       the device view: auto (default: where the machine allows it), on (fail
                       when it refuses), off
  -h, --help           show this help

Each process owns UDP port 4791 on its address: two programs on one host need two addresses
(e.g. --addr 127.0.0.1 and --addr 127.0.0.2).

Exit status: CMD's (128+N for a CMD killed by signal N under the view, except SIGHUP, SIGINT,
SIGTERM and SIGKILL, which end gorxe exec too); 127 when CMD is not found and 126 when it cannot
be run; 2 for a bad command line and 1 when gorxe exec fails otherwise before CMD runs.
`, devselect.EnvAddr, EnvLib)
}

// exec runs the program in place of gorxe; it returns only when it cannot.
func (o options) exec() error {
	exe, err := os.Executable()
	if err != nil {
		exe = ""
	}
	cwd, err := os.Getwd()
	if err != nil {
		cwd = ""
	}
	l, err := o.prepare(os.Environ(), os.Getenv, libPlaces(exe, cwd))
	if err != nil {
		return err
	}
	if o.sysfs != sysfsOff {
		err := l.execInView()
		if o.sysfs == sysfsOn || !errors.Is(err, errNoView) {
			if errors.Is(err, errNoView) {
				err = fmt.Errorf("--sysfs=on: %w", err)
			}
			return err
		}
	}
	return l.exec()
}
