//go:build linux

package main

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// runner holds what every child process of a report shares.
type runner struct {
	gorxe, udpceiling string // binaries
	client, server    netip.Addr
	udpPort           int           // GORXE_PORT of both tools
	maxProcs          int           // GOMAXPROCS of each tool process
	timeout           time.Duration // bound on one tool pair or one ceiling run
	logDir            string        // where each run's output is kept; empty keeps none
	toolJSON          bool          // the tools write --out_json files
	toolCounters      bool          // the tools print their device counters with --counters
	jsonDir           string        // where the clients write them
}

// toolMaxProcs is the GOMAXPROCS of each of the two tool processes: half the machine each, as
// the two share it, unless the environment sets GOMAXPROCS. With more Ps than its share of the
// cores, a process's idle Ps spin looking for work whenever its goroutines hand work to each
// other, taking CPU time the other process needs: on two cores, send_bw -s 64 cost 4.70 µs of CPU
// time per message with GOMAXPROCS=2 and 2.85 µs with 1 at the same message rate, and send_lat's
// average half round trip fell from 47 µs to 14 µs. perftest's own processes are single-threaded.
func toolMaxProcs(env string, cores int) int {
	if n, err := strconv.Atoi(env); err == nil && n > 0 {
		return n
	}
	return max(1, cores/2)
}

// pairResult is what one run of a tool pair printed and cost.
type pairResult struct {
	client, server string        // standard output
	clientJSON     []byte        // the client's --out_json file, nil if it wrote none
	cpu            time.Duration // user and system time of both processes
	// clientCounts and serverCounts are each process's context switches and system calls.
	clientCounts, serverCounts processCounts
}

// serverReady is the line a perftest server prints once it listens for the client.
const serverReady = "Waiting for client to connect"

// runPair runs a perftest tool as a server on r.server and a client on r.client, with the same
// arguments, and returns their output once both have exited successfully.
//
// With defaultProcs the tools run with no GOMAXPROCS in their environment, as a user starts
// them; otherwise with r.maxProcs. Both sides print their device counters (--counters) when
// the tools take the flag.
func (r *runner) runPair(ctx context.Context, id, tool string, args []string, defaultProcs bool) (pairResult, error) {
	var res pairResult
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	port, err := freeTCPPort()
	if err != nil {
		return res, err
	}
	env := []string{"GORXE_PORT=" + strconv.Itoa(r.udpPort), "GOMAXPROCS=" + strconv.Itoa(r.maxProcs)}
	if defaultProcs {
		env[1] = "GOMAXPROCS"
	}
	common := slices.Concat([]string{tool, "-p", strconv.Itoa(port)}, args)
	if r.toolCounters {
		common = append(common, "--counters")
	}

	srv, err := startChild(ctx, tool+" server", env, r.gorxe, slices.Concat(common, []string{"--bind", r.server.String()})...)
	if err != nil {
		return res, err
	}
	// Deferred in this order so that a process is dead before its output is saved.
	defer r.keepLog(id+".server", srv)
	defer srv.kill()
	if err := srv.waitLine(serverReady, r.timeout); err != nil {
		return res, err
	}
	cliArgs := slices.Concat(common, []string{"--bind", r.client.String()})
	jsonFile := ""
	if r.toolJSON {
		jsonFile = filepath.Join(r.jsonDir, id+".client.json")
		_ = os.Remove(jsonFile)
		cliArgs = append(cliArgs, "--out_json", "--out_json_file", jsonFile)
	}
	cli, err := startChild(ctx, tool+" client", env, r.gorxe, append(cliArgs, r.server.String())...)
	if err != nil {
		return res, err
	}
	defer r.keepLog(id+".client", cli)
	defer cli.kill()
	if err := cli.wait(r.timeout); err != nil {
		return res, err
	}
	// The server reports moments after the client; a server that hangs is a failure too.
	if err := srv.wait(30 * time.Second); err != nil {
		return res, err
	}
	res.client, res.server = cli.out.String(), srv.out.String()
	if jsonFile != "" {
		if b, err := os.ReadFile(jsonFile); err == nil {
			res.clientJSON = b
		}
	}
	res.cpu = cli.cpu() + srv.cpu()
	res.clientCounts, res.serverCounts = cli.counts(), srv.counts()
	res.clientCounts.addCalls(res.client)
	res.serverCounts.addCalls(res.server)
	return res, nil
}

// keepLog writes a child's output to the log directory, if there is one.
func (r *runner) keepLog(name string, c *child) {
	if r.logDir == "" {
		return
	}
	text := "$ " + c.cmdline + "\n" + c.out.String()
	if e := c.errOut.String(); e != "" {
		text += "\n--- stderr\n" + e
	}
	_ = os.WriteFile(filepath.Join(r.logDir, name+".txt"), []byte(text), 0o644)
}

// freeTCPPort returns a TCP port nothing listens on at the moment, for the tools' exchange.
func freeTCPPort() (int, error) {
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// freeUDPPort returns a UDP port free on both addresses, so that two gorxe devices can use it
// without meeting a RoCE stack already on 4791.
func freeUDPPort(a, b netip.Addr) (int, error) {
	for range 50 {
		ca, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(a, 0)))
		if err != nil {
			return 0, err
		}
		port := ca.LocalAddr().(*net.UDPAddr).Port
		cb, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(b, uint16(port))))
		ca.Close()
		if err == nil {
			cb.Close()
			return port, nil
		}
	}
	return 0, fmt.Errorf("no UDP port free on both %v and %v", a, b)
}
