package pingpong

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// syncBuffer lets the test read, and wait for, what a running side prints.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{} // closed and replaced on every write
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
	return s.b.Write(p)
}

// waitFor waits until the output contains substr, or done delivers (an early end).
func (s *syncBuffer) waitFor(t *testing.T, substr string, done <-chan error) {
	t.Helper()
	for {
		s.mu.Lock()
		if strings.Contains(s.b.String(), substr) {
			s.mu.Unlock()
			return
		}
		if s.changed == nil {
			s.changed = make(chan struct{})
		}
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case err := <-done:
			require.Fail(t, fmt.Sprintf("ended before printing %q: %v", substr, err))
		case <-time.After(10 * time.Second):
			require.Fail(t, fmt.Sprintf("no %q after 10s", substr))
		}
	}
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRunInProcess runs both sides of every tool in this process (so the race detector sees the
// tool's goroutines), on loopback addresses of their own.
func TestRunInProcess(t *testing.T) {
	for k, args := range map[Kind][]string{
		RC:  {"-n", "20", "-s", "3000", "-c"},
		UC:  {"-n", "20", "-e"},
		UD:  {"-n", "20", "-s", "512", "-c"},
		SRQ: {"-n", "40", "-q", "3", "-r", "8", "-s", "100", "-c"},
	} {
		t.Run(k.Name(), func(t *testing.T) {
			t.Parallel()
			port := fmt.Sprint(freePort(t))
			srvAddr, cliAddr := fmt.Sprintf("127.11.%d.1", k), fmt.Sprintf("127.11.%d.2", k)
			common := append([]string{"-g", "1", "-p", port, "--timeout", "5s"}, args...)
			so, err := ParseArgs(k, append(common, "--bind", srvAddr))
			require.NoError(t, err)
			co, err := ParseArgs(k, append(common, "--bind", cliAddr, srvAddr))
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var srvOut, cliOut syncBuffer
			srvErr := make(chan error, 1)
			go func() { srvErr <- Run(ctx, so, &srvOut, io.Discard) }()
			srvOut.waitFor(t, "local address", srvErr)
			if err := Run(ctx, co, &cliOut, io.Discard); err != nil {
				require.Fail(t, fmt.Sprintf("client: %v\n%s", err, cliOut.String()))
			}
			if err := <-srvErr; err != nil {
				require.Fail(t, fmt.Sprintf("server: %v\n%s", err, srvOut.String()))
			}
			for side, out := range map[string]string{"server": srvOut.String(), "client": cliOut.String()} {
				assert.Contains(t, out, fmt.Sprintf("%d iters in ", co.Iters), "%s output:\n%s", side, out)
				assert.NotContains(t, out, "invalid data", "%s output:\n%s", side, out)
			}
		})
	}
}

// TestRunCanceled checks that a server waiting for its client stops when its context ends.
func TestRunCanceled(t *testing.T) {
	o, err := ParseArgs(RC, []string{"-g", "1", "-p", fmt.Sprint(freePort(t)), "--bind", "127.11.9.1"})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- Run(ctx, o, &out, io.Discard) }()
	out.waitFor(t, "local address", done)
	cancel()
	select {
	case err := <-done:
		assert.False(t, err == nil || !strings.Contains(err.Error(), "interrupted"), "Run = %v, want an interruption", err)
	case <-time.After(5 * time.Second):
		require.Fail(t, "Run did not return after cancellation")
	}
}
