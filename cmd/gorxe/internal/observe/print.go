package observe

import (
	"fmt"
	"io"
	"iter"
	"strconv"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm/rdmacm"
	"github.com/gorxe/gorxe/metrics"
)

// PrintCounters writes the non-zero counters c of device name, one per line by rxe name in the
// order of package counter's table with the values aligned on the right, or says that all are
// zero.
func PrintCounters(w io.Writer, name string, c gorxe.Counters) {
	printTable(w, "counters of "+name, c.All())
}

// PrintCMCounters writes the non-zero counters of a device's connection manager agent, one per
// line as family{label} (mads_sent{REQ}) in the order of the gorxe_cm_* metric families, or says
// that all are zero.
func PrintCMCounters(w io.Writer, name string, s rdmacm.Stats) {
	printTable(w, "cm counters of "+name, func(yield func(string, uint64) bool) {
		for _, st := range metrics.CMStats(s) {
			n := st.Family
			if st.Label != "" {
				n += "{" + st.Label + "}"
			}
			if !yield(n, st.Value) {
				return
			}
		}
	})
}

// printTable writes the title and the non-zero values of all, names on the left and values
// aligned on the right.
func printTable(w io.Writer, title string, all iter.Seq2[string, uint64]) {
	type row struct{ name, value string }
	var rows []row
	nameW, valueW := 0, 0
	for n, v := range all {
		if v != 0 {
			r := row{n, strconv.FormatUint(v, 10)}
			rows = append(rows, r)
			nameW, valueW = max(nameW, len(r.name)), max(valueW, len(r.value))
		}
	}
	fmt.Fprintf(w, "%s:\n", title)
	for _, r := range rows {
		fmt.Fprintf(w, "  %-*s  %*s\n", nameW, r.name, valueW, r.value)
	}
	if len(rows) == 0 {
		fmt.Fprintln(w, "  all zero")
	}
}
