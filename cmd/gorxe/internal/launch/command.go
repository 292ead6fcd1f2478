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
	Synopsis: "gorxe exec [--addr ADDR] -- CMD [ARG...]",
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
	addr string   // --addr: GORXE_ADDR for the program ("": the environment's, if any)
	lib  string   // --lib: the library's directory ("": GORXE_LIB, else the usual places)
	argv []string // the program and its arguments
}

// parseArgs parses the arguments after exec. The options end at the program's name (or at
// "--"), so the program's own options are its own.
func parseArgs(args []string) (options, error) {
	var o options
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
	fmt.Fprintf(w, `Usage: gorxe exec [--addr IFACE|ADDR] [--lib DIR] [--] CMD [ARG...]

Runs CMD, an unmodified program built against libibverbs or librdmacm (ibv_devinfo, ib_write_bw,
rping, ...), on gorxe: it puts gorxe's libibverbs.so.1 and librdmacm.so.1 first on
LD_LIBRARY_PATH, ahead of the directories already there, sets $%[1]s and then becomes CMD
(execve), so that CMD's signals, terminal and exit status are its own. CMD is looked up on $PATH
as a shell does.

Options (they end at CMD or at --; what follows CMD is CMD's):
  --addr=<iface|addr>  the interface or local address CMD's device binds to, as $%[1]s takes
                       them (default: $%[1]s if set, else one device per interface that is up
                       and has an address)
  --lib=<dir>          the directory holding gorxe's libibverbs.so.1 (default: $%[2]s, else the
                       first of these that holds it: ../build/clib and ../lib/gorxe from the
                       directory of the gorxe executable, and build/clib of the gorxe source
                       tree the current directory is in; make clib writes build/clib)
  -h, --help           show this help

Each process owns UDP port 4791 on its address: two programs on one host need two addresses
(e.g. --addr 127.0.0.1 and --addr 127.0.0.2).

Exit status: CMD's; 127 when CMD is not found and 126 when it cannot be run; 2 for a bad
command line and 1 when gorxe exec fails otherwise before CMD runs.
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
	return l.exec()
}
