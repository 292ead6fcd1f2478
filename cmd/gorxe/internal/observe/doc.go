// Package observe gives every tool the same two views of its devices: --metrics ADDR serves their
// counters as Prometheus metrics on http://ADDR/metrics while the tool runs, and --counters
// prints their non-zero counters by rxe name when it ends. A tool that connects through RDMA-CM
// starts with StartCM, which adds its device's connection manager agent to both views.
package observe
