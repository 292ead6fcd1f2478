package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// output runs a command to completion and returns its combined output; a failure carries the
// command line and its output, so the suite's error messages say what went wrong.
func output(name string, args ...string) (string, error) {
	return runIn("", nil, name, args...)
}

// outputEnv is output with extra environment variables.
func outputEnv(env []string, name string, args ...string) (string, error) {
	return runIn("", env, name, args...)
}

// runIn is output in directory dir ("" for the current one).
func runIn(dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// logger prints progress lines with the time since the suite started.
type logger struct {
	mu    sync.Mutex
	start time.Time
}

func newLogger() *logger { return &logger{start: time.Now()} }

func (l *logger) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(os.Stderr, "[%7.1fs] %s\n", time.Since(l.start).Seconds(), fmt.Sprintf(format, args...))
}
