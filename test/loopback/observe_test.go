package loopback

import (
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestObserve runs an rc_pingpong server with --metrics and --counters: gorxe stats -once reads
// its device while it waits for the client, and when the run ends it prints its counters.
func TestObserve(t *testing.T) {
	t.Parallel()
	srvAddr, cliAddr := LoopbackPair(t)
	port, metricsAddr := FreeTCPPort(t), "127.0.0.1:"+FreeTCPPort(t)
	server := Start(t, nil, "rc_pingpong", "-g", "1", "-n", "20", "-p", port, "--bind", srvAddr,
		"--metrics", metricsAddr, "--counters")
	server.WaitLine("local address:", 10*time.Second)

	stats := Start(t, nil, "stats", "-once", metricsAddr)
	require.Zero(t, stats.Wait(10*time.Second), stats.Stderr())
	// Nothing has reached the device yet; only its own reads of the socket may have counted.
	assert.Regexp(t, `^device gorxe_`+regexp.QuoteMeta(srvAddr)+`: 1 QP\n(  all counters zero\n|(  net_recv_(calls|empty) +\d+\n)+)$`, stats.Stdout())

	client := Start(t, nil, "rc_pingpong", "-g", "1", "-n", "20", "-p", port, "--bind", cliAddr, "--counters", srvAddr)
	for _, p := range []*Proc{client, server} {
		require.Zero(t, p.Wait(20*time.Second), "%s\n%s", p.Stdout(), p.Stderr())
	}
	assert.Contains(t, server.Stderr(), "metrics: http://"+metricsAddr+"/metrics\n")
	for p, dev := range map[*Proc]string{server: srvAddr, client: cliAddr} {
		assert.Regexp(t, regexp.MustCompile(`iters in [^\n]*\ncounters of gorxe_`+regexp.QuoteMeta(dev)+`:\n  sent_pkts +\d+\n(  \S+ +\d+\n)*  rdma_sends +20\n`), p.Stdout())
	}
}

// TestPerftestCounters: --counters prints each side's counters after perftest's report.
func TestPerftestCounters(t *testing.T) {
	t.Parallel()
	r := runPerftest(t, "write_bw", "-n", "20", "-s", "4096", "--counters")
	for p, dev := range map[*Proc]string{r.server: r.srvAddr, r.client: r.cliAddr} {
		assert.Regexp(t, regexp.MustCompile(`-{87}\ncounters of gorxe_`+regexp.QuoteMeta(dev)+`:\n  sent_pkts +\d+\n`), p.Stdout())
	}
}
