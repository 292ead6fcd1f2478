package metrics_test

import (
	"context"
	"net/netip"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cm"
	"github.com/gorxe/gorxe/cm/rdmacm"
	"github.com/gorxe/gorxe/internal/fabrictest"
	"github.com/gorxe/gorxe/metrics"
	"github.com/gorxe/gorxe/netio"
)

// cmConnection runs one RDMA-CM connection's life, REQ to DREP, from an agent on a to a listener
// on b, and returns the agents, still open.
func cmConnection(t *testing.T) (a, b *rdmacm.Agent) {
	t.Helper()
	ctx := context.Background()
	fab := netio.NewFabric(netio.FabricConfig{})
	na, nb := fabrictest.Open(t, fab, "gorxe_a", "10.0.0.1"), fabrictest.Open(t, fab, "gorxe_b", "10.0.0.2")
	// Short timeouts (67 ms, 1 ms lifetimes), so that timewait ends quickly.
	cfg := rdmacm.Config{CM: cm.Config{CMResponseTimeout: 14, PacketLifeTime: 8, CAAckDelay: 8}}
	a, err := rdmacm.Open(na.Dev, cfg)
	require.NoError(t, err)
	b, err = rdmacm.Open(nb.Dev, cfg)
	require.NoError(t, err)
	l, err := b.Listen(ctx, netip.MustParseAddrPort("10.0.0.2:7174"), nil)
	require.NoError(t, err)
	accepted := make(chan *rdmacm.Conn, 1)
	go func() {
		c, err := l.Accept(ctx)
		assert.NoError(t, err)
		accepted <- c
	}()
	client, err := a.Dial(ctx, l.Addr(), nil)
	require.NoError(t, err)
	server := <-accepted
	require.NotNil(t, server)
	require.NoError(t, l.Close())
	require.NoError(t, client.Disconnect(ctx))
	require.NoError(t, client.Close())
	require.NoError(t, server.Close())
	<-client.Done()
	<-server.Done()
	return a, b
}

// TestCMCollector scrapes the counters of both ends of a connection: every MAD one agent sent,
// the other received (the fabric loses none), and each message went the way the protocol sends
// it.
func TestCMCollector(t *testing.T) {
	a, b := cmConnection(t)
	defer a.Close()
	defer b.Close()
	reg := prometheus.NewRegistry()
	_, err := metrics.RegisterCM(reg, a, b)
	require.NoError(t, err)
	fams := scrape(t, reg)

	value := func(family, dev, label string) float64 {
		f := fams[metrics.CMMetricName(family)]
		require.NotNil(t, f, family)
		for _, m := range f.GetMetric() {
			ls := m.GetLabel()
			if ls[0].GetValue() == dev && (label == "" || ls[1].GetValue() == label) {
				return m.GetCounter().GetValue()
			}
		}
		require.Fail(t, "no series", "%s{%s,%s}", family, dev, label)
		return 0
	}
	for _, m := range []struct {
		msg  string
		from string
		to   string
	}{{"REQ", "gorxe_a", "gorxe_b"}, {"REP", "gorxe_b", "gorxe_a"}, {"RTU", "gorxe_a", "gorxe_b"},
		{"DREQ", "gorxe_a", "gorxe_b"}, {"DREP", "gorxe_b", "gorxe_a"}} {
		sent := value("mads_sent", m.from, m.msg)
		assert.GreaterOrEqual(t, sent, 1.0, "%s sent by %s", m.msg, m.from)
		assert.Equal(t, sent, value("mads_received", m.to, m.msg), "%s received by %s", m.msg, m.to)
		// Beyond the first, copies are retransmissions or answers to the peer's.
		assert.LessOrEqual(t, value("mads_retransmitted", m.from, m.msg), sent-1, "%s retransmitted by %s", m.msg, m.from)
		assert.Zero(t, value("mads_sent", m.to, m.msg), "%s sent by %s", m.msg, m.to)
	}
	for _, dev := range []string{"gorxe_a", "gorxe_b"} {
		assert.Zero(t, value("mads_dropped", dev, "malformed"))
		assert.Zero(t, value("mads_send_failed", dev, ""))
		assert.Zero(t, value("timeouts", dev, ""))
		assert.Zero(t, value("mads_sent", dev, "REJ"))
	}
	// Eleven messages in three families, six drop reasons, three plain counters, per device.
	assert.Len(t, fams, 7)
	assert.Len(t, fams[metrics.CMMetricName("mads_sent")].GetMetric(), 2*11)
	assert.Len(t, fams[metrics.CMMetricName("mads_dropped")].GetMetric(), 2*6)
}

// TestCMCollectorKeepsLastCounters checks that an agent that has stopped still shows the counters
// of its last scrape instead of failing the scrape.
func TestCMCollectorKeepsLastCounters(t *testing.T) {
	a, b := cmConnection(t)
	defer b.Close()
	reg := prometheus.NewRegistry()
	_, err := metrics.RegisterCM(reg, a)
	require.NoError(t, err)
	before := scrape(t, reg)
	require.NoError(t, a.Close())
	after := scrape(t, reg)
	name := metrics.CMMetricName("mads_sent")
	require.Len(t, after[name].GetMetric(), 11)
	assert.Equal(t, before[name].String(), after[name].String())
}

func TestCMStats(t *testing.T) {
	var s rdmacm.Stats
	s.CM.PerMessage[0].Sent = 3 // REQ
	s.CM.PerMessage[10].Received = 1
	s.CM.Duplicates = 2
	s.CM.BacklogFull = 4
	s.SendDropped = 5
	got := metrics.CMStats(s)
	require.Len(t, got, 3*11+6+3)
	assert.Equal(t, metrics.CMStat{Family: "mads_received", Label: "REQ", Value: 0}, got[0])
	assert.Equal(t, metrics.CMStat{Family: "mads_received", Label: "APR", Value: 1}, got[10])
	assert.Equal(t, metrics.CMStat{Family: "mads_sent", Label: "REQ", Value: 3}, got[11])
	assert.Equal(t, metrics.CMStat{Family: "mads_dropped", Label: "duplicate", Value: 2}, got[34])
	assert.Equal(t, metrics.CMStat{Family: "mads_dropped", Label: "backlog_full", Value: 4}, got[38])
	assert.Equal(t, metrics.CMStat{Family: "mads_send_failed", Value: 5}, got[39])
}
