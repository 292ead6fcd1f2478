package guestrpc

import (
	"bytes"
	"errors"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// lockedBuffer collects a command's stdout and stderr, which exec writes from two goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Process is a command started by Start, in its own process group so that killing it takes its
// children along.
type Process struct {
	cmd      *exec.Cmd
	out      lockedBuffer
	began    time.Time
	timedOut atomic.Bool
	timer    *time.Timer
	done     chan struct{}
	result   Result
}

// Start runs argv with extra environment variables env (may be nil); it is killed once it has
// run for timeout. A command that cannot start yields a Process whose Wait reports why.
func Start(argv []string, env []string, timeout time.Duration) *Process {
	p := &Process{done: make(chan struct{}), began: time.Now()}
	if len(argv) == 0 {
		p.result = Result{ExitCode: -1, Error: "empty argv"}
		close(p.done)
		return p
	}
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Env = append(p.cmd.Environ(), env...)
	p.cmd.Stdout = &p.out
	p.cmd.Stderr = &p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		p.result = Result{ExitCode: -1, Error: err.Error()}
		close(p.done)
		return p
	}
	p.timer = time.AfterFunc(timeout, func() {
		p.timedOut.Store(true)
		p.Kill()
	})
	go p.reap()
	return p
}

func (p *Process) reap() {
	err := p.cmd.Wait()
	p.timer.Stop()
	p.result = Result{
		ExitCode: p.cmd.ProcessState.ExitCode(),
		TimedOut: p.timedOut.Load(),
		Output:   p.out.String(),
		Seconds:  time.Since(p.began).Seconds(),
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		p.result.Error = err.Error()
	}
	close(p.done)
}

// Kill ends the process group at once.
func (p *Process) Kill() {
	if p.cmd != nil && p.cmd.Process != nil {
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// Pid is the process's id, or 0 if it could not start.
func (p *Process) Pid() int {
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Output is what the process has written so far, for a caller that waits for a line.
func (p *Process) Output() string { return p.out.String() }

// Exited reports whether the process has ended, without waiting.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Wait waits for the process to end and returns how it ended.
func (p *Process) Wait() Result {
	<-p.done
	return p.result
}

// WaitTimeout is Wait that gives up after d, reporting false.
func (p *Process) WaitTimeout(d time.Duration) (Result, bool) {
	select {
	case <-p.done:
		return p.result, true
	case <-time.After(d):
		return Result{}, false
	}
}
