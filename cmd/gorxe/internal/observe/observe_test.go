package observe

import (
	"bytes"
	"flag"
	"fmt"
	"net/http"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm/rdmacm"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
	"github.com/gorxe/gorxe/internal/fabrictest"
	"github.com/gorxe/gorxe/netio"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const wantCounters = "counters of gorxe_a:\n" +
	"  sent_pkts     1\n" +
	"  rdma_sends    1\n" +
	"  sent_bytes  100\n" +
	"counters of gorxe_b:\n" +
	"  rcvd_pkts     1\n" +
	"  rdma_recvs    1\n" +
	"  rcvd_bytes  100\n"

func TestPrintCounters(t *testing.T) {
	a, b, _, _ := fabrictest.Exchange(t, 100)
	var out bytes.Buffer
	PrintCounters(&out, a.Dev.Name(), a.Dev.Counters())
	PrintCounters(&out, b.Dev.Name(), b.Dev.Counters())
	assert.Equal(t, wantCounters, out.String())

	out.Reset()
	PrintCounters(&out, "gorxe_x", gorxe.Counters{})
	assert.Equal(t, "counters of gorxe_x:\n  all zero\n", out.String())
}

func TestOptions(t *testing.T) {
	var o Options
	rest, err := getopt.Parse([]string{"--metrics", "127.0.0.1:9108", "--counters", "host"}, o.Getopt())
	require.NoError(t, err)
	assert.Equal(t, []string{"host"}, rest)
	assert.Equal(t, Options{MetricsAddr: "127.0.0.1:9108", Counters: true}, o)

	var f Options
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	f.Flags(fs)
	require.NoError(t, fs.Parse([]string{"-metrics=:9108", "-counters"}))
	assert.Equal(t, Options{MetricsAddr: ":9108", Counters: true}, f)
}

// TestSession serves the devices of a known exchange, scrapes them as Prometheus would, and prints
// their counters at the end.
func TestSession(t *testing.T) {
	a, b, _, _ := fabrictest.Exchange(t, 100)
	var notices, out bytes.Buffer
	s, err := Options{MetricsAddr: "127.0.0.1:0", Counters: true}.Start(&notices, a.Dev, b.Dev)
	require.NoError(t, err)
	url := "http://" + s.MetricsAddr().String() + "/metrics"
	assert.Equal(t, "metrics: "+url+"\n", notices.String())

	resp, err := http.Get(url)
	require.NoError(t, err)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	var got []string
	for _, m := range fams["gorxe_sent_bytes_total"].GetMetric() {
		got = append(got, fmt.Sprintf("%s=%g", m.GetLabel()[0].GetValue(), m.GetCounter().GetValue()))
	}
	assert.ElementsMatch(t, []string{"gorxe_a=100", "gorxe_b=0"}, got)

	s.End(&out)
	assert.Equal(t, wantCounters, out.String())
	_, err = http.Get(url)
	assert.Error(t, err, "End stops serving")
}

func TestSessionOff(t *testing.T) {
	a, _, _, _ := fabrictest.Exchange(t, 1)
	var notices, out bytes.Buffer
	s, err := Options{}.Start(&notices, a.Dev)
	require.NoError(t, err)
	assert.Nil(t, s.MetricsAddr())
	s.End(&out)
	assert.Empty(t, notices.String()+out.String())
}

func TestSessionAddressTaken(t *testing.T) {
	a, _, _, _ := fabrictest.Exchange(t, 1)
	s, err := Options{MetricsAddr: "127.0.0.1:0"}.Start(&bytes.Buffer{}, a.Dev)
	require.NoError(t, err)
	defer s.End(&bytes.Buffer{})
	_, err = Options{MetricsAddr: s.MetricsAddr().String()}.Start(&bytes.Buffer{}, a.Dev)
	assert.ErrorContains(t, err, "--metrics: ")
}

// TestStartCM: a session for an RDMA-CM tool prints the device's counters and then its connection
// manager agent's, and serves the agent's families; without options it opens no agent.
func TestStartCM(t *testing.T) {
	fab := netio.NewFabric(netio.FabricConfig{})
	t.Cleanup(fab.Close)
	a := fabrictest.Open(t, fab, "gorxe_a", "10.0.0.1")
	var notices, out bytes.Buffer
	s, err := Options{}.StartCM(&notices, a.Dev)
	require.NoError(t, err)
	s.End(&out)
	assert.Empty(t, notices.String()+out.String())

	s, err = Options{MetricsAddr: "127.0.0.1:0", Counters: true}.StartCM(&notices, a.Dev)
	require.NoError(t, err)
	resp, err := http.Get("http://" + s.MetricsAddr().String() + "/metrics")
	require.NoError(t, err)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Len(t, fams["gorxe_cm_mads_sent_total"].GetMetric(), 11)
	s.End(&out)
	assert.Equal(t, "counters of gorxe_a:\n  all zero\ncm counters of gorxe_a:\n  all zero\n", out.String())
}

func TestPrintCMCounters(t *testing.T) {
	var s rdmacm.Stats
	s.CM.PerMessage[0].Sent = 12 // REQ
	s.CM.PerMessage[0].Retransmits = 11
	s.CM.PerMessage[3].Received = 1 // REP
	s.CM.Duplicates = 2
	var out bytes.Buffer
	PrintCMCounters(&out, "gorxe_x", s)
	assert.Equal(t, "cm counters of gorxe_x:\n"+
		"  mads_received{REP}        1\n"+
		"  mads_sent{REQ}           12\n"+
		"  mads_retransmitted{REQ}  11\n"+
		"  mads_dropped{duplicate}   2\n", out.String())
}
