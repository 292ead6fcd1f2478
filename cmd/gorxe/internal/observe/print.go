package observe

import (
	"fmt"
	"io"
	"strconv"

	"github.com/gorxe/gorxe"
)

// PrintCounters writes the non-zero counters c of device name, one per line by rxe name in the
// order of package counter's table with the values aligned on the right, or says that all are
// zero.
func PrintCounters(w io.Writer, name string, c gorxe.Counters) {
	type row struct{ name, value string }
	var rows []row
	nameW, valueW := 0, 0
	for n, v := range c.All() {
		if v != 0 {
			r := row{n, strconv.FormatUint(v, 10)}
			rows = append(rows, r)
			nameW, valueW = max(nameW, len(r.name)), max(valueW, len(r.value))
		}
	}
	fmt.Fprintf(w, "counters of %s:\n", name)
	for _, r := range rows {
		fmt.Fprintf(w, "  %-*s  %*s\n", nameW, r.name, valueW, r.value)
	}
	if len(rows) == 0 {
		fmt.Fprintln(w, "  all zero")
	}
}
