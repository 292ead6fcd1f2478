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
	// clibDir holds gorxe's C library for the C perftest rows, and cTools the path of each
	// perftest binary found; cSkip says why those rows cannot run here, cErr why they failed.
	workDir string // the run's temporary directory, removed at its end
	clibDir string
	cTools  map[string]string
	cSkip   string
	cErr    error
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

// side is how one process of a tool pair starts.
type side struct {
	bin  string
	args []string
	env  []string // startChild's changes
}

// sides are the server and client of a case's tool pair: gorxe's Go tool bound to each address,
// or the C perftest tool on gorxe's library with GORXE_ADDR naming it. Both get the RoCE UDP port.
// The Go tools get GOMAXPROCS r.maxProcs, or none with defaultProcs; the C tools none, as a user
// starts them with LD_LIBRARY_PATH and GORXE_ADDR alone. (A C thread's empty polls and posts that
// start the engine each take a P to run Go code: with one P per process on two cores, one run
// measured ib_send_bw -s 64 at 0.033 M msg/s and ib_write_bw 64 KiB at 254 MB/s, against 0.096
// and 509 with the default; ib_send_lat, whose two processes spin, did better with one P.) The
// Go tools print
// their device counters (--counters) and the client writes its result to jsonFile when the
// binary takes those flags; perftest's C tools print text only.
func (r *runner) sides(c benchCase, port int, args []string, jsonFile string) (srv, cli side) {
	env := []string{"GORXE_PORT=" + strconv.Itoa(r.udpPort), "GOMAXPROCS=" + strconv.Itoa(r.maxProcs)}
	if c.defaultProcs || c.cPerftest {
		env[1] = "GOMAXPROCS"
	}
	common := slices.Concat([]string{"-p", strconv.Itoa(port)}, args)
	if c.cPerftest {
		env = append(env, "LD_LIBRARY_PATH="+r.clibDir)
		srv = side{bin: r.cTools[c.tool()], args: common, env: append(slices.Clone(env), "GORXE_ADDR="+r.server.String())}
		cli = side{bin: srv.bin, args: append(slices.Clone(common), r.server.String()),
			env: append(slices.Clone(env), "GORXE_ADDR="+r.client.String())}
		return srv, cli
	}
	common = slices.Concat([]string{c.tool()}, common)
	if r.toolCounters {
		common = append(common, "--counters")
	}
	srv = side{bin: r.gorxe, args: slices.Concat(common, []string{"--bind", r.server.String()}), env: env}
	cliArgs := slices.Concat(common, []string{"--bind", r.client.String()})
	if jsonFile != "" {
		cliArgs = append(cliArgs, "--out_json", "--out_json_file", jsonFile)
	}
	cli = side{bin: r.gorxe, args: append(cliArgs, r.server.String()), env: env}
	return srv, cli
}

// runPair runs a case's tool pair, a server on r.server and a client on r.client with the same
// arguments (see sides), and returns their output once both have exited successfully.
func (r *runner) runPair(ctx context.Context, c benchCase, args []string) (pairResult, error) {
	var res pairResult
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	port, err := freeTCPPort()
	if err != nil {
		return res, err
	}
	id := c.id()
	jsonFile := ""
	if r.toolJSON && !c.cPerftest {
		jsonFile = filepath.Join(r.jsonDir, id+".client.json")
		_ = os.Remove(jsonFile)
	}
	srvSide, cliSide := r.sides(c, port, args, jsonFile)

	srv, err := startChild(ctx, c.tool()+" server", srvSide.env, srvSide.bin, srvSide.args...)
	if err != nil {
		return res, err
	}
	// Deferred in this order so that a process is dead before its output is saved.
	defer r.keepLog(id+".server", srv)
	defer srv.kill()
	// A C server's stdout is a pipe, which its stdio buffers: its ready line comes at exit, so
	// the server is ready when its TCP port listens.
	if c.cPerftest {
		err = srv.waitListening(port, r.timeout)
	} else {
		err = srv.waitLine(serverReady, r.timeout)
	}
	if err != nil {
		return res, err
	}
	cli, err := startChild(ctx, c.tool()+" client", cliSide.env, cliSide.bin, cliSide.args...)
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
