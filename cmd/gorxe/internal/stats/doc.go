// Package stats is gorxe stats: a live view of a running gorxe tool's counters, read from the
// /metrics endpoint its --metrics serves, parsed with the Prometheus text parser and printed
// per device as a table that refreshes every interval, with the busiest QPs under it.
package stats
