// Package oob is the TCP out-of-band connection gorxe's tools exchange queue pair addresses over,
// with per-step timeouts, cancellation and one-line errors.
package oob
