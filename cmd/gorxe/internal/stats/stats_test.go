package stats

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/observe"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
	"github.com/gorxe/gorxe/internal/fabrictest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// serve runs the known exchange and serves its two devices as a tool's --metrics does.
func serve(t *testing.T) (addr string, qpnA, qpnB uint32) {
	t.Helper()
	a, b, qa, qb := fabrictest.Exchange(t, 100)
	s, err := observe.Options{MetricsAddr: "127.0.0.1:0"}.Start(&bytes.Buffer{}, a.Dev, b.Dev)
	require.NoError(t, err)
	t.Cleanup(func() { s.End(&bytes.Buffer{}) })
	return s.MetricsAddr().String(), qa.QPN(), qb.QPN()
}

func TestOnce(t *testing.T) {
	addr, qpnA, qpnB := serve(t)
	o, err := ParseArgs([]string{"-once", addr})
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, Run(context.Background(), o, &out))
	assert.Equal(t, fmt.Sprintf(`device gorxe_a: 1 QP
  sent_pkts     1
  rdma_sends    1
  sent_bytes  100
  top QPs by packets:
    qpn  sent_pkts  rcvd_pkts  sent_bytes  rcvd_bytes  other
    %3d          1          0         100           0  rdma_sends=1

device gorxe_b: 1 QP
  rcvd_pkts     1
  rdma_recvs    1
  rcvd_bytes  100
  top QPs by packets:
    qpn  sent_pkts  rcvd_pkts  sent_bytes  rcvd_bytes  other
    %3d          0          1           0         100  rdma_recvs=1
`, qpnA, qpnB), out.String())

	out.Reset()
	o.Top = 0
	require.NoError(t, Run(context.Background(), o, &out))
	assert.NotContains(t, out.String(), "top QPs")
}

// frames is a writer that ends a live run once it has seen n frames.
type frames struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	n      int
	cancel context.CancelFunc
}

func (f *frames) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.buf.Write(p)
	if strings.Count(f.buf.String(), "device gorxe_b") >= f.n && strings.HasSuffix(f.buf.String(), "\n\n") {
		f.cancel()
	}
	return len(p), nil
}

// TestLive: refreshes show a heading and, from the second on, each counter's rate; the run ends
// without error when its context does.
func TestLive(t *testing.T) {
	addr, _, _ := serve(t)
	o, err := ParseArgs([]string{"-interval", "10ms", addr})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &frames{n: 2, cancel: cancel}
	require.NoError(t, Run(ctx, o, w))
	out := w.buf.String()
	assert.Regexp(t, `^http://`+addr+`/metrics  \d\d:\d\d:\d\d\n\ndevice gorxe_a: 1 QP\n  sent_pkts     1\n`, out)
	first, second, ok := strings.Cut(out[1:], "http://")
	require.True(t, ok, out)
	assert.NotContains(t, first, "/s\n", "no rate before a second scrape")
	assert.Contains(t, second, "  sent_pkts     1           0.0/s\n")
}

func TestScrapeErrors(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	o, err := ParseArgs([]string{"-once", addr})
	require.NoError(t, err)
	assert.EqualError(t, Run(context.Background(), o, &bytes.Buffer{}),
		"nothing is serving metrics at "+addr+" (is a gorxe tool running with --metrics "+addr+"?)")

	served, _, _ := serve(t)
	o, err = ParseArgs([]string{"-once", "http://" + served + "/nothing"})
	require.NoError(t, err)
	assert.ErrorContains(t, Run(context.Background(), o, &bytes.Buffer{}), "404")
}

func TestParseArgs(t *testing.T) {
	o, err := ParseArgs([]string{":9108"})
	require.NoError(t, err)
	assert.Equal(t, Options{URL: "http://127.0.0.1:9108/metrics", Interval: time.Second, Top: 10}, o)
	o, err = ParseArgs([]string{"-once", "-top", "3", "-interval", "2s", "https://host:1/m"})
	require.NoError(t, err)
	assert.Equal(t, Options{URL: "https://host:1/m", Once: true, Interval: 2 * time.Second, Top: 3}, o)

	_, err = ParseArgs([]string{"-h"})
	assert.ErrorIs(t, err, tool.ErrHelp)
	for _, bad := range [][]string{{}, {"a:1", "b:2"}, {"-interval", "0s", "a:1"}, {"-top", "-1", "a:1"}, {"-nosuch", "a:1"}, {"http://"}} {
		_, err := ParseArgs(bad)
		assert.ErrorIs(t, err, getopt.ErrUsage, "%q", bad)
	}
}
