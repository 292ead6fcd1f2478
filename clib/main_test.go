package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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

	"github.com/gorxe/gorxe/internal/clibtest"
)

// The tests build the library once (make clib into a temporary directory) and run the
// distribution's own binaries on it. They skip, saying why, where the machine lacks what that
// needs: make and a C compiler, rdma-core's headers and libraries (libibverbs-dev,
// librdmacm-dev), and the tools (ibverbs-utils).

var (
	libDir  string // where make clib wrote the library; empty when it could not be built
	skipWhy string // why the library was not built
	tmpRoot string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gorxe-clib-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tmpRoot = dir
	if skipWhy = clibtest.Missing(); skipWhy == "" {
		out := filepath.Join(dir, "lib")
		if err := clibtest.Build("..", out); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
		libDir = out
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// needLibrary skips a test when the library could not be built, and needs each of tools.
func needLibrary(t testing.TB, tools ...string) {
	t.Helper()
	if libDir == "" {
		t.Skip("the C library cannot be built here: " + skipWhy)
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (.ci/run installs the packages the tests use)", tool)
		}
	}
}

var (
	gorxeOnce sync.Once
	gorxeBin  string
	gorxeErr  error
)

// goTool returns the command line of one of gorxe's Go tools, building the gorxe command once.
func goTool(t *testing.T, tool string) []string {
	t.Helper()
	gorxeOnce.Do(func() {
		gorxeBin = filepath.Join(tmpRoot, "gorxe")
		out, err := exec.Command("go", "build", "-o", gorxeBin, "github.com/gorxe/gorxe/cmd/gorxe").CombinedOutput()
		if err != nil {
			gorxeErr = fmt.Errorf("building gorxe: %v: %s", err, out)
		}
	})
	require.NoError(t, gorxeErr)
	return []string{gorxeBin, tool}
}

var (
	viewOnce sync.Once
	viewErr  error
)

// underView returns the command line that runs a program on addr under gorxe exec's device view
// (the program and its arguments follow it), or skips the test where the machine refuses the view:
// it needs root, or unprivileged user namespaces.
func underView(t *testing.T, addr string) []string {
	t.Helper()
	exe := goTool(t, "exec")
	view := func(addr string) []string {
		return []string{exe[0], exe[1], "--sysfs=on", "--lib", libDir, "--addr", addr, "--"}
	}
	viewOnce.Do(func() {
		probe := append(view("127.0.0.1"), "true")
		if out, err := exec.Command(probe[0], probe[1:]...).CombinedOutput(); err != nil {
			viewErr = fmt.Errorf("%v: %s", err, out)
		}
	})
	if viewErr != nil {
		t.Skipf("the machine refuses gorxe exec's device view: %v", viewErr)
	}
	return view(addr)
}

var pairs atomic.Uint32

// addressPair returns two loopback addresses no other test uses: 127.20.N.1 for a server and
// 127.20.N.2 for a client. Each process binds UDP 4791 on its own address. Other packages' tests
// stay off 127.20.0.0/16.
func addressPair() (server, client string) {
	n := pairs.Add(1)
	return fmt.Sprintf("127.20.%d.1", n), fmt.Sprintf("127.20.%d.2", n)
}

// proc is a running program whose output the test keeps.
type proc struct {
	name     string
	cmd      *exec.Cmd
	out, err bytes.Buffer
	done     chan struct{}
	runErr   error
}

// procTimeout bounds every program a test runs.
const procTimeout = 30 * time.Second

// start runs bin with args on the library, with GORXE_ADDR=addr; it is killed when the test ends
// if still running.
func start(t *testing.T, addr, bin string, args ...string) *proc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), procTimeout)
	p := &proc{name: bin + " " + strings.Join(args, " "), done: make(chan struct{})}
	p.cmd = exec.CommandContext(ctx, bin, args...)
	p.cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+libDir, "GORXE_ADDR="+addr)
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.err
	require.NoError(t, p.cmd.Start())
	go func() {
		p.runErr = p.cmd.Wait()
		cancel()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// wait waits for the program to exit and requires it to succeed.
func (p *proc) wait(t *testing.T) string {
	t.Helper()
	<-p.done
	require.NoError(t, p.runErr, "%s\nstdout:\n%s\nstderr:\n%s", p.name, p.out.String(), p.err.String())
	return p.out.String()
}

// freeTCPPort returns a TCP port that was free a moment ago, for an out-of-band exchange.
func freeTCPPort(t *testing.T) string {
	t.Helper()
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// waitListening waits until something listens on TCP port (as /proc/net/tcp and tcp6 show), so
// a client starts only once its server accepts; it fails if server exits first.
func waitListening(t *testing.T, port string, server *proc) {
	t.Helper()
	p, err := strconv.Atoi(port)
	require.NoError(t, err)
	want := fmt.Sprintf(":%04X ", p)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for {
		for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
			b, err := os.ReadFile(f)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			require.NoError(t, err)
			for _, line := range strings.Split(string(b), "\n") {
				fields := strings.Fields(line)
				// local_address is field 1, the state field 3; 0A is LISTEN
				if len(fields) > 3 && strings.HasSuffix(fields[1]+" ", want) && fields[3] == "0A" {
					return
				}
			}
		}
		select {
		case <-server.done:
			require.Fail(t, fmt.Sprintf("%s exited before listening: %v\nstdout:\n%s\nstderr:\n%s",
				server.name, server.runErr, server.out.String(), server.err.String()))
		case <-deadline:
			require.Fail(t, fmt.Sprintf("%s is not listening on TCP port %s after 10 s", server.name, port))
		case <-tick.C:
		}
	}
}
