//go:build linux

// Command report measures gorxe between two processes against this machine's raw UDP ceiling,
// in one run, and prints every gorxe figure with its ratio to the matching ceiling.
//
// It builds the gorxe command and the UDP ceiling program once, runs the ceiling program, then
// runs the perftest-compatible tools as client and server processes on two loopback addresses:
// RC WRITE bandwidth over message sizes and MTUs, READ bandwidth, the 64-byte SEND message rate,
// 64-byte half round trips, and scaling over QP counts; a re-executed copy of itself measures the
// resident memory of idle QPs. The tools run with GOMAXPROCS pinned to half the cores each, and
// the headline cases once more right after with no GOMAXPROCS, as a user starts them. Each
// process's context switches (getrusage) and its device's system calls (--counters) are given per
// message on the bandwidth and rate rows. Results come from the clients' --out_json files, or from the
// tools' perftest-format text output when the binary predates that flag. Bandwidth is compared with the GSO+GRO byte rate at the datagram
// size of a full packet, the SEND rate with the sendmmsg datagram rate at 80 bytes, and latency
// with a UDP ping-pong as a difference. The distribution's C perftest tools (ib_write_bw,
// ib_send_bw, ib_send_lat) then run the Go tools' headline cases on gorxe's C library, built with
// make clib, and are set against the Go figures (C ÷ Go, C − Go); where the machine lacks perftest
// or what the library's build needs, those rows say so and count as not run. Targets are shown,
// not enforced: the exit status says only whether every measurement that could run did.
//
// Usage:
//
//	report [-duration 2s] [-lat-iters 10000] [-qps 1,16,256,1024] [-idle-qps 1024]
//	       [-json] [-out DIR] [-readme README.md] [-run REGEXP] [-clib DIR]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"net/netip"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// options are the command line.
type options struct {
	duration      time.Duration
	latIters      int
	qps           []int
	idleQPs       int
	client        netip.Addr
	server        netip.Addr
	udpPort       int
	timeout       time.Duration
	asJSON        bool
	outDir        string
	readme        string
	run           *regexp.Regexp
	gorxeBin      string
	udpceilingBin string
	goBin         string
	clibDir       string
}

func main() {
	var (
		o                          options
		qps, client, server, runRE string
		internalIdle               int
	)
	flag.DurationVar(&o.duration, "duration", 2*time.Second, "length of each bandwidth run and of each ceiling measurement (whole seconds for the tools)")
	flag.IntVar(&o.latIters, "lat-iters", 10000, "iterations of each latency run")
	flag.StringVar(&qps, "qps", "1,16,256,1024", "comma-separated QP counts for the scaling rows")
	flag.IntVar(&o.idleQPs, "idle-qps", 1024, "idle RC QP pairs for the memory row (0 skips it)")
	flag.StringVar(&client, "client", "127.0.0.1", "address of the client processes")
	flag.StringVar(&server, "server", "127.0.0.2", "address of the server processes")
	flag.IntVar(&o.udpPort, "udp-port", 0, "RoCE UDP port of the tools (GORXE_PORT); 0 picks a free one")
	flag.DurationVar(&o.timeout, "timeout", 2*time.Minute, "bound on one tool pair")
	flag.BoolVar(&o.asJSON, "json", false, "print JSON instead of Markdown")
	flag.StringVar(&o.outDir, "out", "", "directory for report.md, report.json and, under logs/, every process's output")
	flag.StringVar(&o.readme, "readme", "", "README whose generated benchmark section receives the Markdown")
	flag.StringVar(&runRE, "run", "", "only the gorxe measurements whose id matches this regular expression")
	flag.StringVar(&o.gorxeBin, "gorxe", "", "a gorxe binary to use instead of building one")
	flag.StringVar(&o.udpceilingBin, "udpceiling", "", "a UDP ceiling binary to use instead of building one")
	flag.StringVar(&o.clibDir, "clib", "", "a directory holding gorxe's C library (libibverbs.so.1) to use instead of building one with make clib")
	flag.StringVar(&o.goBin, "go", "go", "the go command that builds the binaries")
	flag.IntVar(&internalIdle, "internal-idle-qps", 0, "internal: run as the idle-QP process")
	flag.Parse()

	err := parseOptions(&o, qps, client, server, runRE)
	if err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(2)
	}
	if internalIdle > 0 {
		if err := runIdleQPs(internalIdle, o.client, o.server, o.udpPort); err != nil {
			fmt.Fprintln(os.Stderr, "idle QPs:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code := run(ctx, &o)
	stop()
	os.Exit(code)
}

// parseOptions checks and converts the flags that need it.
func parseOptions(o *options, qps, client, server, runRE string) error {
	if o.duration <= 0 || o.latIters < 2 || o.idleQPs < 0 || o.timeout <= 0 {
		return errors.New("-duration, -lat-iters and -timeout must be positive, -idle-qps not negative")
	}
	var err error
	if o.qps, err = parseCounts(qps); err != nil {
		return fmt.Errorf("-qps: %w", err)
	}
	if o.client, err = netip.ParseAddr(client); err != nil {
		return fmt.Errorf("-client: %w", err)
	}
	if o.server, err = netip.ParseAddr(server); err != nil {
		return fmt.Errorf("-server: %w", err)
	}
	if o.client == o.server {
		return errors.New("-client and -server must differ: each gorxe device owns its address's RoCE port")
	}
	if o.udpPort < 0 || o.udpPort > 65535 {
		return errors.New("-udp-port out of range")
	}
	if runRE != "" {
		if o.run, err = regexp.Compile(runRE); err != nil {
			return fmt.Errorf("-run: %w", err)
		}
	}
	return nil
}

// parseCounts reads a comma-separated list of QP counts.
func parseCounts(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > 16384 {
			return nil, fmt.Errorf("%q is not a QP count from 1 to 16384", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// seconds is the run length in the whole seconds perftest's -D takes.
func (o *options) seconds() int {
	return max(1, int(math.Ceil(o.duration.Seconds())))
}
