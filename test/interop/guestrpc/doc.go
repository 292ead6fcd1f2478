// Package guestrpc is the contract between the interop suite and the agent that runs inside each
// test VM (JSON requests and responses, one per HTTP POST), plus the probes that tell when a
// server has bound its port.
package guestrpc
