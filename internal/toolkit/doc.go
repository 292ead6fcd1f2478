// Package toolkit is the plumbing shared by gorxe's rdma-core and perftest compatible tools:
// choosing the local addresses a tool's device binds to, printing and encoding GIDs the way the C
// tools do, and the TCP out-of-band connection the tools exchange queue pair addresses over, with
// timeouts, cancellation and one-line errors.
package toolkit
