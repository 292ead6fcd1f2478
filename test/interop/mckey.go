package main

import (
	"fmt"
	"net/netip"
	"regexp"
	"time"
)

// Multicast: librdmacm's mckey, where receivers (the server role) join an IP group through
// RDMA-CM and a sender (the client role) joins it and sends UD messages to it. On RoCE no MAD is
// exchanged: the join is local, the kernel joins the IP group (IGMP) and each side finds the other
// only through the group, so only the sender's packets are on the wire.
//
// IPv4 only: kernel rxe's RDMA-CM refuses IPv6 groups on RoCEv2 (ENOTSUPP from
// cma_iboe_join_multicast). The bridge floods multicast (snooping off, see multicastBridgeSteps),
// and both sides bind their address (-b), which also picks the interface the group is joined and
// sent on, so no multicast route is needed.

// mcGroup4 is the IPv4 group the mckey cases join.
var mcGroup4 = netip.MustParseAddr("239.18.0.1")

// mckey is librdmacm's multicast example. gorxe's receiver prints its listening line right after
// joining when its pause (the C tool's 3 s wait before sending or receiving) is 0; the sender
// keeps the pause, which gives the receiver time to attach.
var mckey = tool{c: "mckey", gorxe: "mckey", cm: &cmSyntax{
	client: "-s", gorxeListening: "receiving data transfers", gorxeServerOpts: []string{"--pause", "0"}}}

// mcCases are the multicast runs: messages of a few sizes up to the path MTU.
func mcCases() []runCase {
	const t = 60 * time.Second
	return []runCase{
		c(mckey, 4, 1024, t, "-C", "10"),
		c(mckey, 4, 1024, t, "-C", "20", "-S", "1024"),
	}
}

// mckeyArgvs are mckey's command lines: the receiver (server) and the sender (client) each bind
// their own address of the case's family and join the group.
func mckeyArgvs(rc runCase, cli, srv endpoint) (sArgv, cArgv []string) {
	opts := func(e endpoint, role string) []string {
		o := []string{"-m", mcGroup4.String()}
		if role != "" {
			o = append(o, role)
		}
		o = append(o, "-b", e.addr(rc.family).String())
		o = append(o, rc.opts...)
		if e.name() == "gorxe" {
			o = append(o, rc.gorxeOpts...)
		}
		return o
	}
	so := opts(srv, rc.tool.cm.server)
	if srv.name() == "gorxe" {
		so = append(so, rc.tool.cm.gorxeServerOpts...)
	}
	return srv.cmArgv(rc.tool, so), cli.cmArgv(rc.tool, opts(cli, rc.tool.cm.client))
}

// mcJoined waits until kernel rxe's receiver j has an RDMA-CM id resolved to the group, which it
// joins at once: nothing listens, and the C tool prints nothing before it has all messages.
func (e *rxeEndpoint) mcJoined(j job, timeout time.Duration) (bool, error) {
	want := regexp.MustCompile(`dst-addr ` + regexp.QuoteMeta(mcGroup4.String()) + `\b`)
	return e.waitCMID(j, want, fmt.Sprintf("no cm_id resolved to %v", mcGroup4), timeout)
}

// capturePeers are the addresses whose packets a run's capture must hold: both sides', except
// where the server only receives: mckey's receiver, and perftest's UD sends without RDMA-CM (no
// ACKs, and the exchange is over TCP).
func capturePeers(rc runCase, cli, srv endpoint) []string {
	if rc.tool.c == mckey.c || rc.tool == sendBW && isUD(rc) {
		return []string{cli.addr(rc.family).String()}
	}
	return []string{srv.addr(rc.family).String(), cli.addr(rc.family).String()}
}

// isUD says whether perftest case rc runs over UD (-c UD).
func isUD(rc runCase) bool {
	for i := 0; i+1 < len(rc.opts); i++ {
		if rc.opts[i] == "-c" && rc.opts[i+1] == "UD" {
			return true
		}
	}
	return false
}

// multicastBridgeSteps turn the bridge's IGMP snooping off, so that it floods group traffic to
// every port whatever reports it has seen.
func multicastBridgeSteps() [][]string {
	return [][]string{{"link", "set", bridgeName, "type", "bridge", "mcast_snooping", "0"}}
}
