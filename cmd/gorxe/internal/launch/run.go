package launch

import (
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"syscall"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
	"github.com/gorxe/gorxe/internal/devselect"
)

// Exit statuses of a program that cannot be run, as a shell reports them.
const (
	exitNotFound = 127 // no such program
	exitCannot   = 126 // there, but it cannot be run
)

// launch is the execve that runs the program.
type launch struct {
	path string   // the program's file
	argv []string // its arguments, argv[0] as typed
	env  []string
}

// prepare checks the address and finds the library and the program, for an environment env
// (getenv reads it) and the directories searched for the library by default.
func (o options) prepare(env []string, getenv func(string) string, places []string) (launch, error) {
	switch {
	case o.addr != "":
		if err := checkAddr("--addr "+o.addr, o.addr, getenv); err != nil {
			return launch{}, err
		}
	case getenv(devselect.EnvAddr) != "":
		a := getenv(devselect.EnvAddr)
		if err := checkAddr(devselect.EnvAddr+"="+a, a, getenv); err != nil {
			return launch{}, err
		}
	}
	lib, err := findLib(o.lib, getenv(EnvLib), places)
	if err != nil {
		return launch{}, err
	}
	path, err := lookPath(o.argv[0])
	if err != nil {
		return launch{}, err
	}
	return launch{path: path, argv: o.argv, env: environ(env, lib, o.addr)}, nil
}

// lookPath finds the program name as a shell does: a name with a slash is a path, any other is
// looked up in the directories of $PATH, an entry "." or "" included.
func lookPath(name string) (string, error) {
	path, err := exec.LookPath(name)
	if errors.Is(err, exec.ErrDot) {
		err = nil
	}
	if err == nil {
		return path, nil
	}
	if errors.Is(err, exec.ErrNotFound) {
		return "", &tool.StatusError{Status: exitNotFound, Err: fmt.Errorf("%s: command not found", name)}
	}
	// The name is a path: say what is wrong with the file, as the shell does, without the wrappers
	// that repeat the name.
	if errno, ok := errors.AsType[syscall.Errno](err); ok {
		err = errno
	}
	status := exitCannot
	if errors.Is(err, fs.ErrNotExist) {
		status = exitNotFound
	}
	return "", &tool.StatusError{Status: status, Err: fmt.Errorf("%s: %w", name, err)}
}

// exec replaces the process with the program; it returns only when the kernel refuses. The
// program inherits the signals gorxe ignores: SIGINT and SIGHUP if gorxe's caller ignored them
// (the runner leaves them alone for this command), but no others, which the Go runtime handles
// from its start, so that execve resets them to their default.
func (l launch) exec() error {
	err := syscall.Exec(l.path, l.argv, l.env)
	status := exitCannot
	if errors.Is(err, fs.ErrNotExist) {
		status = exitNotFound // the file, or the loader it names, has gone
	}
	return &tool.StatusError{Status: status, Err: fmt.Errorf("%s: %w", l.argv[0], err)}
}
