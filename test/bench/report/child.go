//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// child is a process the report started, in a process group of its own so that it and anything
// it starts in turn (the UDP ceiling program's peers) can be killed together.
type child struct {
	name    string // the process's role, for errors
	cmdline string // its command line with the binary's base name, for logs
	cmd     *exec.Cmd
	out     *lineBuffer
	errOut  *lineBuffer
	done    chan struct{} // closed when the process has exited and its output is in
	err     error         // from Wait, valid after done
}

// startChild runs bin with args as the process called name, in this program's environment
// changed by env: NAME=VALUE sets a variable, a bare NAME removes it. Cancelling ctx kills the
// process group.
func startChild(ctx context.Context, name string, env []string, bin string, args ...string) (*child, error) {
	c := &child{
		name:    name,
		cmdline: strings.Join(append([]string{filepath.Base(bin)}, args...), " "),
		out:     newLineBuffer(),
		errOut:  newLineBuffer(),
		done:    make(chan struct{}),
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = environ(os.Environ(), env)
	cmd.Stdout, cmd.Stderr = c.out, c.errOut
	// Pdeathsig takes the child down with this program even if it dies without cleaning up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return killGroup(cmd) }
	// A grandchild holding the output pipes open must not keep Wait from returning.
	cmd.WaitDelay = 3 * time.Second
	c.cmd = cmd
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		c.err = cmd.Wait()
		// Whatever the process left behind in its group goes with it.
		_ = killGroup(cmd)
		c.out.close()
		close(c.done)
	}()
	return c, nil
}

// environ is base with the changes of startChild's env applied.
func environ(base, changes []string) []string {
	out := slices.Clone(base)
	for _, ch := range changes {
		name, _, set := strings.Cut(ch, "=")
		out = slices.DeleteFunc(out, func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
		if set {
			out = append(out, ch)
		}
	}
	return out
}

func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// kill ends the process group and waits for the process to be reaped.
func (c *child) kill() {
	_ = killGroup(c.cmd)
	<-c.done
}

// wait waits for the process to exit, killing it if the timeout passes first.
func (c *child) wait(timeout time.Duration) error {
	select {
	case <-c.done:
	case <-time.After(timeout):
		c.kill()
		return fmt.Errorf("%s: no exit within %v: %s", c.name, timeout, c.errOut.tail())
	}
	if c.err != nil {
		return fmt.Errorf("%s: %w: %s", c.name, c.err, c.errOut.tail())
	}
	return nil
}

// cpu is the user and system time the exited process used.
func (c *child) cpu() time.Duration {
	ps := c.cmd.ProcessState
	if ps == nil {
		return 0
	}
	return ps.UserTime() + ps.SystemTime()
}

// counts are the exited process's context switches, voluntary and involuntary, summed over all
// its threads by the kernel (getrusage as wait4 returns it).
func (c *child) counts() processCounts {
	ps := c.cmd.ProcessState
	if ps == nil {
		return processCounts{}
	}
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return processCounts{}
	}
	return processCounts{voluntary: float64(ru.Nvcsw), involuntary: float64(ru.Nivcsw)}
}

// waitLine waits until a line of the process's standard output contains substr.
func (c *child) waitLine(substr string, timeout time.Duration) error {
	deadline := time.After(timeout)
	for {
		text, wake, closed := c.out.snapshot()
		if strings.Contains(text, substr) {
			return nil
		}
		if closed {
			<-c.done
			return fmt.Errorf("%s exited (%v) before printing %q: %s", c.name, c.err, substr, c.errOut.tail())
		}
		select {
		case <-wake:
		case <-deadline:
			return fmt.Errorf("%s printed no %q within %v", c.name, substr, timeout)
		}
	}
}

// lineBuffer collects a process's output and wakes waiters on every write.
type lineBuffer struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	wake   chan struct{}
	closed bool
}

func newLineBuffer() *lineBuffer { return &lineBuffer{wake: make(chan struct{})} }

func (l *lineBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if !l.closed {
		close(l.wake)
		l.wake = make(chan struct{})
	}
	return len(p), nil
}

func (l *lineBuffer) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.closed = true
		close(l.wake)
	}
}

func (l *lineBuffer) snapshot() (string, <-chan struct{}, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String(), l.wake, l.closed
}

func (l *lineBuffer) String() string {
	s, _, _ := l.snapshot()
	return s
}

// tail is the last line of the output, for error messages.
func (l *lineBuffer) tail() string {
	s := strings.TrimSpace(l.String())
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if s == "" {
		return "no output"
	}
	return s
}

// listenPollInterval is how often waitListening looks at the kernel's socket tables.
const listenPollInterval = 5 * time.Millisecond

// waitListening waits until a TCP socket listens on port, as /proc/net/tcp and tcp6 show, for a
// server whose output says nothing until it exits; it fails if the process exits first.
func (c *child) waitListening(port int, timeout time.Duration) error {
	tick := time.NewTicker(listenPollInterval)
	defer tick.Stop()
	deadline := time.After(timeout)
	for {
		var tables []string
		for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
			if b, err := os.ReadFile(f); err == nil {
				tables = append(tables, string(b))
			}
		}
		if listensOn(tables, port) {
			return nil
		}
		select {
		case <-c.done:
			return fmt.Errorf("%s exited (%v) before listening on TCP port %d: %s", c.name, c.err, port, c.errOut.tail())
		case <-deadline:
			return fmt.Errorf("%s is not listening on TCP port %d after %v", c.name, port, timeout)
		case <-tick.C:
		}
	}
}

// tcpListen is the state column's value of a listening socket in /proc/net/tcp.
const tcpListen = "0A"

// listensOn says whether a table in the format of /proc/net/tcp has a listening socket on port:
// its local_address field (the second) ends in the port in hexadecimal, its state (the fourth)
// is LISTEN.
func listensOn(tables []string, port int) bool {
	suffix := fmt.Sprintf(":%04X", port)
	for _, t := range tables {
		for l := range strings.SplitSeq(t, "\n") {
			f := strings.Fields(l)
			if len(f) > 3 && strings.HasSuffix(f[1], suffix) && f[3] == tcpListen {
				return true
			}
		}
	}
	return false
}
