package tool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
)

// Exit statuses of every command.
const (
	ExitOK      = 0
	ExitFailure = 1 // the command ran and failed
	ExitUsage   = 2 // bad command line
	// ExitInterrupted is the status of a command ended by Ctrl-C or SIGTERM: 128 + SIGINT, what a
	// shell reports for a process the signal killed, so scripts see the same either way.
	ExitInterrupted = 130
)

// ErrHelp is what a command's Parse returns for -h or --help: the runner prints the usage on
// standard output and succeeds.
var ErrHelp = errors.New("help requested")

// ErrInterrupted is the one wording of a run that Ctrl-C or SIGTERM ended.
var ErrInterrupted = errors.New("interrupted")

// StatusError is a failure of a run that ends with an exit status of its own instead of
// ExitFailure: gorxe exec's 127 for a program it cannot find and 126 for one it cannot start,
// what a shell reports, so that they differ from the exit statuses of the program it runs.
type StatusError struct {
	Status int
	Err    error
}

func (e *StatusError) Error() string { return e.Err.Error() }
func (e *StatusError) Unwrap() error { return e.Err }

// Run is a parsed command: it runs until done, failed or ctx ends (Ctrl-C), printing its
// results on stdout and its notices on stderr, and returns why it failed.
type Run func(ctx context.Context, stdout, stderr io.Writer) error

// Command is one gorxe subcommand.
type Command struct {
	Name     string // as typed after gorxe
	Synopsis string // the command line, for gorxe help
	Summary  string // one line, for gorxe help
	// Parse parses the arguments after the name into the run they ask for. It returns ErrHelp for
	// -h, an error matching getopt.ErrUsage for a bad command line (the usage follows its line,
	// exit status 2), and any other error for a well-formed command line that cannot run, as an
	// address that does not parse is to the C tools (exit status 1).
	Parse func(args []string) (Run, error)
	// Usage writes the command's help.
	Usage func(w io.Writer)
	// Main, for a command that parses and reports on its own, replaces Parse and Usage.
	Main func(args []string, stdout, stderr io.Writer) int
	// Execs says the run replaces the process with another program (execve), which must inherit
	// the signal dispositions gorxe was started with: the runner then leaves Ctrl-C and SIGTERM
	// alone (a SIGINT the caller ignored stays ignored) and the run's context never ends.
	Execs bool
}

// Exec runs c with args and returns the exit status. Ctrl-C and SIGTERM cancel the run's
// context, unless c.Execs, or c.Main, which has no context to cancel: there they keep their
// default effect and end the process. Every failure is one line on stderr, "gorxe NAME: why".
func Exec(c Command, args []string, stdout, stderr io.Writer) int {
	if c.Execs || c.Main != nil {
		return ExecContext(context.Background(), c, args, stdout, stderr)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return ExecContext(ctx, c, args, stdout, stderr)
}

// ExecContext is Exec with ctx standing for the signals: its end interrupts the run.
func ExecContext(ctx context.Context, c Command, args []string, stdout, stderr io.Writer) int {
	if c.Main != nil {
		return c.Main(args, stdout, stderr)
	}
	run, err := c.Parse(args)
	switch {
	case errors.Is(err, ErrHelp):
		c.Usage(stdout)
		return ExitOK
	case errors.Is(err, getopt.ErrUsage):
		fmt.Fprintf(stderr, "%s\n\n", errorLine(c.Name, err))
		c.Usage(stderr)
		return ExitUsage
	case err != nil:
		fmt.Fprintf(stderr, "%s\n", errorLine(c.Name, err))
		return ExitFailure
	}
	err = run(ctx, stdout, stderr)
	switch {
	case err == nil:
		return ExitOK
	case ctx.Err() != nil:
		// Whatever the run was waiting for when it was interrupted, Ctrl-C is why it ended; a
		// tool that says how far it got wraps ErrInterrupted.
		if !errors.Is(err, ErrInterrupted) {
			err = ErrInterrupted
		}
		fmt.Fprintf(stderr, "%s\n", errorLine(c.Name, err))
		return ExitInterrupted
	}
	fmt.Fprintf(stderr, "%s\n", errorLine(c.Name, err))
	if se, ok := errors.AsType[*StatusError](err); ok {
		return se.Status
	}
	return ExitFailure
}

// errorLine is the line a failed command prints: its name, then err. The library's errors open
// with its package name ("gorxe: open: ..."), which the command's own prefix already says.
func errorLine(name string, err error) string {
	msg, _ := strings.CutPrefix(err.Error(), "gorxe: ")
	return "gorxe " + name + ": " + msg
}
