package loopback

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// gorxeBin is the gorxe binary TestMain builds once for every test of the package.
var gorxeBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gorxe-loopback-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	gorxeBin = filepath.Join(dir, "gorxe")
	build := exec.Command("go", "build", "-o", gorxeBin, "github.com/gorxe/gorxe/cmd/gorxe")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building gorxe:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// procTimeout bounds every process a test starts; a test that needs longer says so.
const procTimeout = 30 * time.Second

// Proc is a running gorxe process whose output the test reads.
type Proc struct {
	t      testing.TB
	name   string
	cmd    *exec.Cmd
	mu     sync.Mutex
	out    []string // stdout lines so far
	errBuf strings.Builder
	newOut chan struct{} // closed and replaced whenever a line arrives
	done   chan struct{} // closed when the process has exited and its output is read
	code   int
}

// Start runs gorxe with args and extra environment variables (KEY=VALUE). The process is killed
// when the test ends if it is still running.
func Start(t testing.TB, env []string, args ...string) *Proc {
	t.Helper()
	return start(t, env, gorxeBin, args...)
}

// StartIn is Start inside the network namespace netns (which needs root).
func StartIn(t testing.TB, netns string, env []string, args ...string) *Proc {
	t.Helper()
	return start(t, env, "ip", append([]string{"netns", "exec", netns, gorxeBin}, args...)...)
}

func start(t testing.TB, env []string, bin string, args ...string) *Proc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), procTimeout)
	p := &Proc{t: t, name: strings.Join(args, " "), newOut: make(chan struct{}), done: make(chan struct{})}
	p.cmd = exec.CommandContext(ctx, bin, args...)
	p.cmd.Env = append(os.Environ(), env...)
	stdout, err := p.cmd.StdoutPipe()
	require.NoError(t, err)
	stderr, err := p.cmd.StderrPipe()
	require.NoError(t, err)
	if err := p.cmd.Start(); err != nil {
		cancel()
		require.Fail(t, fmt.Sprint(err))
	}
	var readers sync.WaitGroup
	readers.Add(2)
	go func() {
		defer readers.Done()
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.mu.Lock()
			p.out = append(p.out, sc.Text())
			close(p.newOut)
			p.newOut = make(chan struct{})
			p.mu.Unlock()
		}
	}()
	go func() {
		defer readers.Done()
		b, _ := io.ReadAll(stderr)
		p.mu.Lock()
		p.errBuf.Write(b)
		p.mu.Unlock()
	}()
	go func() {
		readers.Wait()
		err := p.cmd.Wait()
		cancel()
		p.code = p.cmd.ProcessState.ExitCode()
		if err != nil && p.code == 0 {
			p.code = -1
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		cancel()
		<-p.done
	})
	return p
}

// WaitLine waits until a stdout line contains substr and returns it; it fails the test if the
// process exits or the timeout passes first.
func (p *Proc) WaitLine(substr string, timeout time.Duration) string {
	p.t.Helper()
	deadline := time.After(timeout)
	for seen := 0; ; {
		p.mu.Lock()
		lines, wake := p.out, p.newOut
		p.mu.Unlock()
		for ; seen < len(lines); seen++ {
			if strings.Contains(lines[seen], substr) {
				return lines[seen]
			}
		}
		select {
		case <-wake:
		case <-p.done:
			p.mu.Lock()
			n := len(p.out)
			p.mu.Unlock()
			if n == seen {
				require.Fail(p.t, fmt.Sprintf("%s exited (status %d) before printing %q; stdout:\n%s\nstderr:\n%s", p.name, p.code, substr, p.Stdout(), p.Stderr()))
			}
		case <-deadline:
			require.Fail(p.t, fmt.Sprintf("%s printed no %q within %v; stdout:\n%s\nstderr:\n%s", p.name, substr, timeout, p.Stdout(), p.Stderr()))
		}
	}
}

// Wait waits for the process to exit and returns its exit status.
func (p *Proc) Wait(timeout time.Duration) int {
	p.t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(timeout):
		require.Fail(p.t, fmt.Sprintf("%s still running after %v; stdout:\n%s\nstderr:\n%s", p.name, timeout, p.Stdout(), p.Stderr()))
		return -1
	}
}

// Interrupt sends the process SIGINT, as Ctrl-C does.
func (p *Proc) Interrupt() { _ = p.cmd.Process.Signal(os.Interrupt) }

// Kill ends the process at once.
func (p *Proc) Kill() { _ = p.cmd.Process.Kill() }

// Stdout returns the standard output read so far.
func (p *Proc) Stdout() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.out) == 0 {
		return ""
	}
	return strings.Join(p.out, "\n") + "\n"
}

// Stderr returns the standard error read so far (all of it once the process has exited).
func (p *Proc) Stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.errBuf.String()
}

var pairs atomic.Uint32

// LoopbackPair returns two loopback addresses no other test of this package uses:
// 127.10.N.1 for a server and 127.10.N.2 for a client (N counts up; Linux answers for all of
// 127.0.0.0/8). Other packages' tests stay off 127.10.0.0/16.
func LoopbackPair(t testing.TB) (server, client string) {
	n := pairs.Add(1)
	require.LessOrEqual(t, n, uint32(255*250), "out of loopback address pairs")
	b2, b3 := 10+n/250, n%250
	return fmt.Sprintf("127.%d.%d.1", b2, b3), fmt.Sprintf("127.%d.%d.2", b2, b3)
}

// FreeTCPPort returns a TCP port that was free a moment ago, for a tool's out-of-band exchange.
func FreeTCPPort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// toolRun is a finished server and client run of one tool.
type toolRun struct {
	server, client   *Proc
	srvAddr, cliAddr string
}

// runPair starts tool's server on one loopback address, waits for it to print ready, starts its
// client on another address with the same extra arguments, and waits for both to exit
// successfully.
func runPair(t *testing.T, ready, tool string, args ...string) toolRun {
	t.Helper()
	srvAddr, cliAddr := LoopbackPair(t)
	common := append([]string{tool, "-p", FreeTCPPort(t)}, args...)
	server := Start(t, nil, append(common, "--bind", srvAddr)...)
	server.WaitLine(ready, 10*time.Second)
	client := Start(t, nil, append(common, "--bind", cliAddr, srvAddr)...)
	for _, p := range []*Proc{client, server} {
		if code := p.Wait(20 * time.Second); code != 0 {
			require.Fail(t, fmt.Sprintf("%s: exit status %d\nstdout:\n%s\nstderr:\n%s", p.name, code, p.Stdout(), p.Stderr()))
		}
	}
	return toolRun{server: server, client: client, srvAddr: srvAddr, cliAddr: cliAddr}
}
