package loopback

import (
	"io"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cmCountersRe matches a connection manager counter table of device dev holding every line of
// want, in order, with other lines between them.
func cmCountersRe(dev string, want ...string) *regexp.Regexp {
	re := `cm counters of gorxe_` + regexp.QuoteMeta(dev) + `:\n`
	for _, w := range want {
		re += `(  \S+ +\d+\n)*  ` + regexp.QuoteMeta(w) + ` +[1-9]\d*\n`
	}
	return regexp.MustCompile(re)
}

// TestRpingCMObserve runs rping with --metrics on the server and --counters on both sides: while
// the server waits, its CM agent's families are served at zero; at the end each side prints the
// CM messages it sent and received, REQ to DREP, after its device's counters.
func TestRpingCMObserve(t *testing.T) {
	t.Parallel()
	srv, cli := LoopbackPair(t)
	metricsAddr := "127.0.0.1:" + FreeTCPPort(t)
	server := startRpingServer(t, srv, "--metrics", metricsAddr, "--counters")

	resp, err := http.Get("http://" + metricsAddr + "/metrics")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Contains(t, string(body), `gorxe_cm_mads_received_total{device="gorxe_`+srv+`",message="REQ"} 0`)
	assert.Contains(t, string(body), `gorxe_cm_mads_dropped_total{device="gorxe_`+srv+`",reason="malformed"} 0`)

	client := Start(t, nil, "rping", "-c", "-a", srv, "-I", cli, "-C", "3", "--counters")
	for _, p := range []*Proc{client, server} {
		require.Zero(t, p.Wait(20*time.Second), "%s\nstdout:\n%s\nstderr:\n%s", p.name, p.Stdout(), p.Stderr())
	}
	assert.Regexp(t, regexp.MustCompile(`counters of gorxe_`+regexp.QuoteMeta(cli)+`:\n(  \S+ +\d+\n)+cm counters of`), client.Stdout())
	assert.Regexp(t, cmCountersRe(cli, "mads_received{REP}", "mads_received{DREP}", "mads_sent{REQ}", "mads_sent{RTU}",
		"mads_sent{DREQ}"), client.Stdout())
	assert.Regexp(t, cmCountersRe(srv, "mads_received{REQ}", "mads_received{RTU}", "mads_received{DREQ}", "mads_sent{REP}",
		"mads_sent{DREP}"), server.Stdout())
}

// TestUcmatoseCMCounters: with --counters, ucmatose prints its CM agent's counters before "test
// complete"; its server disconnects, so the DREQ goes the other way from rping's.
func TestUcmatoseCMCounters(t *testing.T) {
	t.Parallel()
	srv, cli := LoopbackPair(t)
	server := Start(t, nil, "ucmatose", "-b", srv, "-C", "5", "--counters")
	server.WaitLine("cmatose: starting server", 10*time.Second)
	client := Start(t, nil, "ucmatose", "-s", srv, "-b", cli, "-C", "5", "--counters")
	for _, p := range []*Proc{client, server} {
		require.Zero(t, p.Wait(20*time.Second), "%s\nstdout:\n%s\nstderr:\n%s", p.name, p.Stdout(), p.Stderr())
	}
	assert.Regexp(t, regexp.MustCompile(`(?s)`+cmCountersRe(cli, "mads_received{REP}", "mads_received{DREQ}", "mads_sent{REQ}",
		"mads_sent{RTU}", "mads_sent{DREP}").String()+`.*test complete\nreturn status 0\n$`), client.Stdout())
	assert.Regexp(t, cmCountersRe(srv, "mads_received{REQ}", "mads_received{RTU}", "mads_received{DREP}", "mads_sent{REP}",
		"mads_sent{DREQ}"), server.Stdout())
}
