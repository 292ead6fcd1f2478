package metrics_test

import (
	"bytes"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/internal/fabrictest"
	"github.com/gorxe/gorxe/metrics"
	"github.com/gorxe/gorxe/netio"
)

// scrape serves reg over HTTP as an exporter would and parses the answer with the client library's
// text parser.
func scrape(t *testing.T, reg *prometheus.Registry) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	var buf bytes.Buffer
	_, err = buf.ReadFrom(resp.Body)
	require.NoError(t, err)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(&buf)
	require.NoError(t, err)
	return fams
}

// value returns the value of the series of family name with exactly the labels given.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	f, ok := fams[name]
	if !ok {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		if assert.ObjectsAreEqual(labels, got) {
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue(), true
			}
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}

func TestScrapeAfterExchange(t *testing.T) {
	fab := netio.NewFabric(netio.FabricConfig{})
	t.Cleanup(fab.Close)
	a := fabrictest.Open(t, fab, "gorxe_a", "10.0.0.1")
	b := fabrictest.Open(t, fab, "gorxe_b", "10.0.0.2")
	qa, qb := a.UDQP(t), b.UDQP(t)
	a.UDQP(t) // idle: no series of its own
	b.PostRecvs(t, qb, 1)
	a.Send(t, qa, b, qb.QPN(), 100)
	b.WaitOne(t)
	fabrictest.Settle(t, a, b)

	reg := prometheus.NewRegistry()
	c, err := metrics.Register(reg, a.Dev, b.Dev)
	require.NoError(t, err)
	fams := scrape(t, reg)

	f := fams["gorxe_sent_pkts_total"]
	require.NotNil(t, f)
	assert.Equal(t, dto.MetricType_COUNTER, f.GetType())
	assert.Equal(t, counter.SentPkts.Desc().Help, f.GetHelp())
	assert.Equal(t, counter.SentPkts.Desc().Help+" (one QP)", fams["gorxe_qp_sent_pkts_total"].GetHelp())

	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"gorxe_sent_pkts_total", map[string]string{"device": "gorxe_a"}, 1},
		{"gorxe_sent_bytes_total", map[string]string{"device": "gorxe_a"}, 100},
		{"gorxe_rdma_sends_total", map[string]string{"device": "gorxe_a"}, 1},
		{"gorxe_rcvd_pkts_total", map[string]string{"device": "gorxe_b"}, 1},
		{"gorxe_rcvd_bytes_total", map[string]string{"device": "gorxe_b"}, 100},
		{"gorxe_rdma_recvs_total", map[string]string{"device": "gorxe_b"}, 1},
		{"gorxe_rcvd_pkts_total", map[string]string{"device": "gorxe_a"}, 0},
		{"gorxe_qp_sent_pkts_total", map[string]string{"device": "gorxe_a", "qpn": strconv.Itoa(int(qa.QPN()))}, 1},
		{"gorxe_qp_rcvd_bytes_total", map[string]string{"device": "gorxe_b", "qpn": strconv.Itoa(int(qb.QPN()))}, 100},
		{"gorxe_qps", map[string]string{"device": "gorxe_a"}, 2},
		{"gorxe_qps_unexported", map[string]string{"device": "gorxe_a"}, 1},
		{"gorxe_qps_unexported", map[string]string{"device": "gorxe_b"}, 0},
	} {
		got, ok := value(t, fams, tc.name, tc.labels)
		if assert.True(t, ok, "%s%v missing", tc.name, tc.labels) {
			assert.Equal(t, tc.want, got, "%s%v", tc.name, tc.labels)
		}
	}
	// Every counter has a device family with one series per device.
	for id := range counter.NumIDs {
		assert.Len(t, fams[metrics.DeviceMetricName(id)].GetMetric(), 2, id.Name())
	}
	assert.Len(t, fams["gorxe_qp_sent_pkts_total"].GetMetric(), 2, "one series per QP with traffic")

	require.True(t, reg.Unregister(c))
	assert.Empty(t, scrape(t, reg))
}

// TestCardinalityBound checks the rule of the package doc: idle QPs get no series, and of the busy
// ones only the MaxQPs busiest do, while the device series count every QP.
func TestCardinalityBound(t *testing.T) {
	fab := netio.NewFabric(netio.FabricConfig{})
	t.Cleanup(fab.Close)
	a := fabrictest.Open(t, fab, "gorxe_a", "10.0.0.1")
	b := fabrictest.Open(t, fab, "gorxe_b", "10.0.0.2")
	const idle, busy, limit = 1000, 5, 3
	for range idle {
		a.UDQP(t)
	}
	dst := b.UDQP(t)
	b.PostRecvs(t, dst, busy*(busy+1)/2)
	var senders []uint32
	for i := range busy {
		q := a.UDQP(t)
		senders = append(senders, q.QPN())
		for range i + 1 { // the i-th sender sends i+1 datagrams
			a.Send(t, q, b, dst.QPN(), 8)
			b.WaitOne(t)
		}
	}

	fabrictest.Settle(t, a, b)
	reg := prometheus.NewRegistry()
	c := metrics.NewCollector(a.Dev)
	c.MaxQPs = limit
	require.NoError(t, reg.Register(c))
	fams := scrape(t, reg)
	series := fams["gorxe_qp_sent_pkts_total"].GetMetric()
	require.Len(t, series, limit)
	for i, want := range []uint32{senders[4], senders[3], senders[2]} {
		got, ok := value(t, fams, "gorxe_qp_sent_pkts_total", map[string]string{"device": "gorxe_a", "qpn": strconv.Itoa(int(want))})
		require.True(t, ok, "QP %d is among the busiest", want)
		assert.Equal(t, float64(busy-i), got)
	}
	v, _ := value(t, fams, "gorxe_sent_pkts_total", map[string]string{"device": "gorxe_a"})
	assert.Equal(t, float64(busy*(busy+1)/2), v, "the device series count the QPs left out")
	v, _ = value(t, fams, "gorxe_qps", map[string]string{"device": "gorxe_a"})
	assert.Equal(t, float64(idle+busy), v)
	v, _ = value(t, fams, "gorxe_qps_unexported", map[string]string{"device": "gorxe_a"})
	assert.Equal(t, float64(idle+busy-limit), v)

	deviceOnly := metrics.NewCollector(a.Dev)
	deviceOnly.MaxQPs = -1
	reg = prometheus.NewRegistry()
	require.NoError(t, reg.Register(deviceOnly))
	fams = scrape(t, reg)
	assert.NotContains(t, fams, "gorxe_qp_sent_pkts_total", "a negative limit exports device series only")
	v, _ = value(t, fams, "gorxe_qps_unexported", map[string]string{"device": "gorxe_a"})
	assert.Equal(t, float64(idle+busy), v)
}
