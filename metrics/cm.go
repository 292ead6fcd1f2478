package metrics

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gorxe/gorxe/cm"
	"github.com/gorxe/gorxe/cm/mad"
	"github.com/gorxe/gorxe/cm/rdmacm"
)

// CMStat is one counter of a connection manager agent: its family's short name (the metric name
// without the gorxe_cm_ prefix and _total suffix), the value of the family's label (the CM
// message, or the reason a MAD was dropped; "" for a family without a label) and its value.
type CMStat struct {
	Family string
	Label  string
	Value  uint64
}

// The families of the CM counters, with their label and help text.
var cmFamilies = []struct{ name, label, help string }{
	{"mads_received", "message", "well-formed CM MADs received on QP1, by message"},
	{"mads_sent", "message", "CM MADs sent on QP1, retransmissions included, by message"},
	{"mads_retransmitted", "message", "CM MADs sent again after a response timeout, by message"},
	{"mads_dropped", "reason", "CM MADs received that no connection took as new: malformed, duplicate (answered or ignored), " +
		"unknown_conn, unexpected (for the connection's state), no_listener, or backlog_full (REQs left unanswered " +
		"for the peer to retransmit)"},
	{"mads_send_failed", "", "CM MADs that could not be posted on QP1 (no send buffer or no route); retransmissions recover them"},
	{"rejects_sent", "", "REJs the connection manager sent itself: timeouts, unknown service IDs, stale connections"},
	{"timeouts", "", "CM messages that ran out of retries"},
}

// CMStats lists the counters of an agent's statistics in the order of their families, a message
// family's values in attribute ID order (REQ first), every value included, zeros too.
func CMStats(s rdmacm.Stats) []CMStat {
	c := &s.CM
	var out []CMStat
	for _, f := range []struct {
		family string
		get    func(cm.MessageCounters) uint64
	}{
		{"mads_received", func(m cm.MessageCounters) uint64 { return m.Received }},
		{"mads_sent", func(m cm.MessageCounters) uint64 { return m.Sent }},
		{"mads_retransmitted", func(m cm.MessageCounters) uint64 { return m.Retransmits }},
	} {
		for i := range cm.NumMessages {
			a := mad.AttrREQ + mad.AttrID(i)
			out = append(out, CMStat{f.family, a.String(), f.get(c.Message(a))})
		}
	}
	for _, r := range []struct {
		reason string
		v      uint64
	}{{"malformed", c.Malformed}, {"duplicate", c.Duplicates}, {"unknown_conn", c.UnknownConn},
		{"unexpected", c.Unexpected}, {"no_listener", c.NoListener}, {"backlog_full", c.BacklogFull}} {
		out = append(out, CMStat{"mads_dropped", r.reason, r.v})
	}
	return append(out,
		CMStat{"mads_send_failed", "", s.SendDropped},
		CMStat{"rejects_sent", "", c.Rejected},
		CMStat{"timeouts", "", c.Timeouts})
}

// CMMetricName is the name of a CM counter family, e.g. gorxe_cm_mads_sent_total.
func CMMetricName(family string) string { return Namespace + "_cm_" + family + "_total" }

// cmDescs holds the descriptors of the CM families by short name, built once.
var cmDescs = func() map[string]*prometheus.Desc {
	m := map[string]*prometheus.Desc{}
	for _, f := range cmFamilies {
		labels := []string{"device"}
		if f.label != "" {
			labels = append(labels, f.label)
		}
		m[f.name] = prometheus.NewDesc(CMMetricName(f.name), f.help, labels, nil)
	}
	return m
}()

// cmScrapeTimeout bounds how long a scrape waits for a busy agent's counters.
const cmScrapeTimeout = time.Second

// CMCollector is a prometheus.Collector over the counters of connection manager agents, one
// series set per agent's device (label device). Its methods are safe for concurrent use. A scrape
// asks each agent for its counters; an agent that has stopped keeps the last counters it gave.
type CMCollector struct {
	mu     sync.Mutex
	agents []*rdmacm.Agent
	last   map[*rdmacm.Agent]rdmacm.Stats
}

// NewCMCollector returns a collector over agents.
func NewCMCollector(agents ...*rdmacm.Agent) *CMCollector {
	return &CMCollector{agents: slices.Clone(agents), last: map[*rdmacm.Agent]rdmacm.Stats{}}
}

// RegisterCM registers a collector over agents with reg and returns it.
func RegisterCM(reg prometheus.Registerer, agents ...*rdmacm.Agent) (*CMCollector, error) {
	c := NewCMCollector(agents...)
	if err := reg.Register(c); err != nil {
		return nil, err
	}
	return c, nil
}

// Describe implements prometheus.Collector.
func (c *CMCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range cmFamilies {
		ch <- cmDescs[f.name]
	}
}

// Collect implements prometheus.Collector.
func (c *CMCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	agents := slices.Clone(c.agents)
	c.mu.Unlock()
	for _, a := range agents {
		ctx, cancel := context.WithTimeout(context.Background(), cmScrapeTimeout)
		s, err := a.Stats(ctx)
		cancel()
		c.mu.Lock()
		if err == nil {
			c.last[a] = s
		} else {
			s = c.last[a]
		}
		c.mu.Unlock()
		name := a.Device().Name()
		for _, st := range CMStats(s) {
			labels := []string{name}
			if st.Label != "" {
				labels = append(labels, st.Label)
			}
			ch <- prometheus.MustNewConstMetric(cmDescs[st.Family], prometheus.CounterValue, float64(st.Value), labels...)
		}
	}
}
