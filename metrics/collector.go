package metrics

import (
	"cmp"
	"slices"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/counter"
)

// DefaultMaxQPs is how many QPs per device get series of their own when Collector.MaxQPs is 0.
const DefaultMaxQPs = 256

// Namespace prefixes every metric name.
const Namespace = "gorxe"

// Collector is a prometheus.Collector over the counters of one or more devices. Its methods are
// safe for concurrent use, scrapes included.
type Collector struct {
	// MaxQPs bounds the QPs per device exported with series of their own: 0 means DefaultMaxQPs,
	// a negative value none (device series only). Set it before the first scrape.
	MaxQPs int

	mu   sync.Mutex
	devs []*gorxe.Device
}

// NewCollector returns a collector over devs.
func NewCollector(devs ...*gorxe.Device) *Collector {
	return &Collector{devs: slices.Clone(devs)}
}

// Add starts exporting dev too.
func (c *Collector) Add(dev *gorxe.Device) {
	c.mu.Lock()
	c.devs = append(c.devs, dev)
	c.mu.Unlock()
}

// Remove stops exporting dev.
func (c *Collector) Remove(dev *gorxe.Device) {
	c.mu.Lock()
	c.devs = slices.DeleteFunc(c.devs, func(d *gorxe.Device) bool { return d == dev })
	c.mu.Unlock()
}

// Register registers a collector over devs with reg and returns it; reg.Unregister(c) undoes it.
// The device label is Device.Name, so the devices of one registry need distinct names (two of the
// same name fail the scrape). A closed device keeps its last counters until it is removed.
func Register(reg prometheus.Registerer, devs ...*gorxe.Device) (*Collector, error) {
	c := NewCollector(devs...)
	if err := reg.Register(c); err != nil {
		return nil, err
	}
	return c, nil
}

// descs holds the descriptors of every family, built once: they depend on the counter table only.
var descs = newDescSet()

type descSet struct {
	device, qp         [counter.NumIDs]*prometheus.Desc
	qps, qpsUnexported *prometheus.Desc
}

func newDescSet() *descSet {
	var s descSet
	for id := range counter.NumIDs {
		d := id.Desc()
		s.device[id] = prometheus.NewDesc(DeviceMetricName(id), d.Help, []string{"device"}, nil)
		s.qp[id] = prometheus.NewDesc(QPMetricName(id), d.Help+" (one QP)", []string{"device", "qpn"}, nil)
	}
	s.qps = prometheus.NewDesc(Namespace+"_qps", "live QPs of the device", []string{"device"}, nil)
	s.qpsUnexported = prometheus.NewDesc(Namespace+"_qps_unexported",
		"live QPs without series of their own (idle, or past the per-device limit); the device series count them", []string{"device"}, nil)
	return &s
}

// DeviceMetricName is the name of the device family of counter id, e.g. gorxe_sent_pkts_total.
func DeviceMetricName(id counter.ID) string { return Namespace + "_" + id.Name() + "_total" }

// QPMetricName is the name of the per-QP family of counter id, e.g. gorxe_qp_sent_pkts_total.
func QPMetricName(id counter.ID) string { return Namespace + "_qp_" + id.Name() + "_total" }

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for id := range counter.NumIDs {
		ch <- descs.device[id]
		ch <- descs.qp[id]
	}
	ch <- descs.qps
	ch <- descs.qpsUnexported
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	devs := slices.Clone(c.devs)
	limit := c.MaxQPs
	c.mu.Unlock()
	if limit == 0 {
		limit = DefaultMaxQPs
	}
	for _, d := range devs {
		collectDevice(ch, d, max(limit, 0))
	}
}

// qpStats is one QP's counters while a scrape picks the QPs to export.
type qpStats struct {
	qpn uint32
	c   gorxe.Counters
}

func (q *qpStats) packets() uint64 { return q.c.Get(counter.SentPkts) + q.c.Get(counter.RcvdPkts) }

func collectDevice(ch chan<- prometheus.Metric, d *gorxe.Device, limit int) {
	name := d.Name()
	for id, v := range d.Counters().Snapshot().All() {
		ch <- prometheus.MustNewConstMetric(descs.device[id], prometheus.CounterValue, float64(v), name)
	}
	live := 0
	var busy []qpStats
	for qpn, qc := range d.QPCounters() {
		live++
		if q := (qpStats{qpn, qc}); q.packets() > 0 {
			busy = append(busy, q)
		}
	}
	slices.SortFunc(busy, func(a, b qpStats) int {
		return cmp.Or(cmp.Compare(b.packets(), a.packets()), cmp.Compare(a.qpn, b.qpn))
	})
	busy = busy[:min(len(busy), limit)]
	for _, q := range busy {
		qpn := strconv.FormatUint(uint64(q.qpn), 10)
		for id, v := range q.c.Snapshot().All() {
			ch <- prometheus.MustNewConstMetric(descs.qp[id], prometheus.CounterValue, float64(v), name, qpn)
		}
	}
	ch <- prometheus.MustNewConstMetric(descs.qps, prometheus.GaugeValue, float64(live), name)
	ch <- prometheus.MustNewConstMetric(descs.qpsUnexported, prometheus.GaugeValue, float64(live-len(busy)), name)
}
