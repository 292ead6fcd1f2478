//go:build linux

// Command agent runs inside an interop test VM: the guest's /init starts it once the rxe device is
// up, and the suite on the host drives it over HTTP to start the C tools, wait for them and collect
// their output. Each command runs with a hard timeout so a hung tool cannot stall the suite.
package main
