// Package benchout holds what gorxe's measurement programs under test/bench share in writing
// their reports: the JSON form other programs read, and the units of the Markdown tables.
package benchout

import (
	"encoding/json"
	"fmt"
	"io"
)

// WriteJSON writes report as indented JSON, the form other programs merge.
func WriteJSON(w io.Writer, report any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(report)
}

// Micros formats a duration in nanoseconds as microseconds with two decimals.
func Micros(ns int64) string { return fmt.Sprintf("%.2f µs", float64(ns)/1e3) }
