package tool

import "time"

// LatencyBusyPoll is Config.BusyPoll for a tool that busy-polls its CQs, as perftest's latency
// tests and rdma-core's pingpongs do without -e: how long the device keeps polling the network
// after a datagram before its receive goroutine sleeps. The tool's own CQ polls read the network
// in latency mode, so the receive goroutine need only look again once or twice; polling longer
// measured no better on two cores and takes CPU time from the peer.
const LatencyBusyPoll = 2 * time.Microsecond
