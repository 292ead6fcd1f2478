// Package guestrpc is the contract between the interop suite and the agent that runs inside each
// test VM (JSON requests and responses, one per HTTP POST), plus the listening-port probe both
// sides use.
package guestrpc
