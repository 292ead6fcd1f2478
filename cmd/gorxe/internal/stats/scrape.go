package stats

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"syscall"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/metrics"
)

// snapshot is one scrape, by device name.
type snapshot map[string]*device

// device is what one scrape says about a device.
type device struct {
	name     string
	qps      int               // live QPs (gorxe_qps)
	counters map[string]uint64 // by counter name
	byQP     map[uint32]map[string]uint64
}

// scrape reads url and parses it with the Prometheus text parser.
func scrape(ctx context.Context, client *http.Client, url string) (snapshot, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	// The text format, which the parser reads, whatever else the server could offer.
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	resp, err := client.Do(req)
	if errors.Is(err, syscall.ECONNREFUSED) {
		return nil, fmt.Errorf("nothing is serving metrics at %s (is a gorxe tool running with --metrics %s?)", req.URL.Host, req.URL.Host)
	}
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	return fromFamilies(fams), nil
}

var (
	qpPrefix     = metrics.Namespace + "_qp_"
	devicePrefix = metrics.Namespace + "_"
	qpsGauge     = metrics.Namespace + "_qps"
)

// fromFamilies sorts the families of a gorxe endpoint into devices and QPs. Families of a
// counter this build does not know are kept by their name, so a newer tool's counters show too.
func fromFamilies(fams map[string]*dto.MetricFamily) snapshot {
	s := snapshot{}
	dev := func(name string) *device {
		d := s[name]
		if d == nil {
			d = &device{name: name, counters: map[string]uint64{}, byQP: map[uint32]map[string]uint64{}}
			s[name] = d
		}
		return d
	}
	for fname, f := range fams {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			devName, ok := labels["device"]
			if !ok {
				continue
			}
			switch {
			case fname == qpsGauge:
				dev(devName).qps = int(m.GetGauge().GetValue())
			case m.GetCounter() == nil || !strings.HasSuffix(fname, "_total"):
			case strings.HasPrefix(fname, qpPrefix):
				qpn, err := strconv.ParseUint(labels["qpn"], 10, 32)
				if err != nil {
					continue
				}
				d := dev(devName)
				c := d.byQP[uint32(qpn)]
				if c == nil {
					c = map[string]uint64{}
					d.byQP[uint32(qpn)] = c
				}
				c[strings.TrimSuffix(strings.TrimPrefix(fname, qpPrefix), "_total")] = uint64(m.GetCounter().GetValue())
			case strings.HasPrefix(fname, devicePrefix):
				name := strings.TrimSuffix(strings.TrimPrefix(fname, devicePrefix), "_total")
				dev(devName).counters[name] = uint64(m.GetCounter().GetValue())
			}
		}
	}
	return s
}

// devices returns the devices in name order.
func (s snapshot) devices() []*device {
	out := make([]*device, 0, len(s))
	for _, d := range s {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b *device) int { return strings.Compare(a.name, b.name) })
	return out
}

// counterOrder sorts counter names as package counter's table does, unknown names after, by name.
func counterOrder(a, b string) int {
	ia, oka := counter.ByName(a)
	ib, okb := counter.ByName(b)
	switch {
	case oka && okb:
		return cmp.Compare(ia, ib)
	case oka != okb:
		if oka {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}

// packets is what QPs are ranked by.
func packets(c map[string]uint64) uint64 {
	return c[counter.SentPkts.Name()] + c[counter.RcvdPkts.Name()]
}
