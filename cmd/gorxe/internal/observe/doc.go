// Package observe gives every tool the same two views of its devices: --metrics ADDR serves their
// counters as Prometheus metrics on http://ADDR/metrics while the tool runs, and --counters
// prints their non-zero counters by rxe name when it ends.
package observe
