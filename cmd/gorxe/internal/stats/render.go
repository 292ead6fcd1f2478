package stats

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gorxe/gorxe/counter"
)

// qpColumns are the columns of the QP table; a QP's other non-zero counters follow as name=value.
var qpColumns = []counter.ID{counter.SentPkts, counter.RcvdPkts, counter.SentBytes, counter.RcvdBytes}

// render writes one frame: per device its non-zero counters, with the rate per second since prev
// when there is a previous scrape (elapsed after it), then its top QPs by packets.
func render(w io.Writer, cur, prev snapshot, elapsed time.Duration, top int) {
	devs := cur.devices()
	if len(devs) == 0 {
		fmt.Fprintln(w, "no gorxe device at this endpoint")
		return
	}
	for i, d := range devs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		var old *device
		if prev != nil {
			old = prev[d.name]
		}
		renderDevice(w, d, old, elapsed, top)
	}
}

func renderDevice(w io.Writer, d, old *device, elapsed time.Duration, top int) {
	qps := "QPs"
	if d.qps == 1 {
		qps = "QP"
	}
	fmt.Fprintf(w, "device %s: %d %s\n", d.name, d.qps, qps)
	names := slices.SortedFunc(maps.Keys(d.counters), counterOrder)
	names = slices.DeleteFunc(names, func(n string) bool { return d.counters[n] == 0 })
	if len(names) == 0 {
		fmt.Fprintln(w, "  all counters zero")
	}
	nameW, valueW := 0, 0
	for _, n := range names {
		nameW, valueW = max(nameW, len(n)), max(valueW, len(strconv.FormatUint(d.counters[n], 10)))
	}
	for _, n := range names {
		line := fmt.Sprintf("  %-*s  %*d", nameW, n, valueW, d.counters[n])
		if old != nil && elapsed > 0 {
			delta := d.counters[n] - min(old.counters[n], d.counters[n])
			line += fmt.Sprintf("  %12.1f/s", float64(delta)/elapsed.Seconds())
		}
		fmt.Fprintln(w, line)
	}
	renderQPs(w, d, top)
}

// renderQPs writes the top QPs of d by packets as a table.
func renderQPs(w io.Writer, d *device, top int) {
	qpns := slices.Collect(maps.Keys(d.byQP))
	slices.SortFunc(qpns, func(a, b uint32) int {
		return cmp.Or(cmp.Compare(packets(d.byQP[b]), packets(d.byQP[a])), cmp.Compare(a, b))
	})
	qpns = qpns[:min(len(qpns), top)]
	if len(qpns) == 0 {
		return
	}
	fmt.Fprintf(w, "  top QPs by packets:\n")
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "  qpn\t")
	for _, id := range qpColumns {
		fmt.Fprintf(tw, "%s\t", id.Name())
	}
	fmt.Fprintln(tw, "  other")
	for _, qpn := range qpns {
		c := d.byQP[qpn]
		fmt.Fprintf(tw, "  %d\t", qpn)
		for _, id := range qpColumns {
			fmt.Fprintf(tw, "%d\t", c[id.Name()])
		}
		var other []string
		for _, n := range slices.SortedFunc(maps.Keys(c), counterOrder) {
			if c[n] != 0 && !slices.ContainsFunc(qpColumns, func(id counter.ID) bool { return id.Name() == n }) {
				other = append(other, fmt.Sprintf("%s=%d", n, c[n]))
			}
		}
		if len(other) > 0 {
			fmt.Fprint(tw, "  "+strings.Join(other, " "))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}
