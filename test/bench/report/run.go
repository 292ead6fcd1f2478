//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// run measures everything, writes the outputs, and returns the exit status: 0 when every
// measurement ran (whether or not it met its target), 1 otherwise.
func run(ctx context.Context, o *options) int {
	rep := &Report{
		Machine: machineInfo(o.goBin),
		Settings: Settings{
			DurationS: o.seconds(), LatencyIters: o.latIters, QPCounts: o.qps, IdleQPs: o.idleQPs,
			ClientAddr: o.client.String(), ServerAddr: o.server.String(),
			ProcessesNote: "client and server of every tool are separate processes; CPU per message is both processes' user+system time over the messages moved; system calls per message are each process's sendmmsg and recvmmsg calls (its device's net_send_calls and net_recv_calls), context switches per message each process's voluntary and involuntary switches (getrusage); for a timed run, times and counts are scaled to the measured part of the run",
		},
	}
	r, cleanup, err := newRunner(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		return 1
	}
	defer cleanup()
	rep.Settings.RoCEUDPPort = r.udpPort
	rep.Settings.GoMaxProcs = r.maxProcs

	progress("UDP ceiling (%v per measurement)", o.duration)
	if rep.Ceiling, err = r.ceiling(ctx, o.duration); err != nil {
		rep.Errors = append(rep.Errors, err.Error())
		progress("  failed: %v", err)
	}
	cases := plan(o.qps)
	r.prepareC(ctx, o, cases)
	for i, c := range cases {
		if o.run != nil && !o.run.MatchString(c.id()) {
			continue
		}
		if ctx.Err() != nil {
			rep.Rows = append(rep.Rows, failedRows(c, ctx.Err())...)
			continue
		}
		args := c.args(o.seconds(), o.latIters)
		procs := ""
		if c.defaultProcs {
			procs = " (default GOMAXPROCS)"
		}
		progress("[%d/%d] %s %s%s", i+1, len(cases), c.tool(), strings.Join(args, " "), procs)
		rows := r.measureCase(ctx, c, args, c.measuredShare(o.seconds()), rep.Ceiling)
		for _, row := range rows {
			if row.Skipped != "" {
				progress("  not run: %s", row.Skipped)
			} else if row.Error != "" {
				progress("  failed: %s", row.Error)
			} else {
				progress("  %s: %s", row.Label, quantity(row.Unit, row.Value))
			}
		}
		rep.Rows = append(rep.Rows, rows...)
	}
	if o.idleQPs > 0 && (o.run == nil || o.run.MatchString("idle-qp-rss")) && ctx.Err() == nil {
		progress("idle QPs: %d connected pairs", o.idleQPs)
		self, err := os.Executable()
		row := Row{ID: "idle-qp-rss", Unit: unitBytes, Label: "resident memory per idle RC QP"}
		if err == nil {
			row = r.idleRow(ctx, self, o.idleQPs)
		} else {
			row.Error = err.Error()
		}
		rep.Rows = append(rep.Rows, row)
	}
	fastByDefault(rep.Rows)
	compareWithGo(rep.Rows)
	return finish(rep, o, ctx.Err() != nil)
}

// measureCase runs one case's tool pair and turns its output into rows.
// share is the part of the run its result covers (benchCase.measuredShare).
func (r *runner) measureCase(ctx context.Context, c benchCase, args []string, share float64, ceil *ceilingReport) []Row {
	if c.cPerftest {
		if r.cErr != nil {
			return failedRows(c, r.cErr)
		}
		if why := r.cSkipReason(c); why != "" {
			return skippedRows(c, why)
		}
	}
	res, err := r.runPair(ctx, c, args)
	if err != nil {
		return failedRows(c, err)
	}
	res.cpu = time.Duration(float64(res.cpu) * share)
	res.clientCounts, res.serverCounts = res.clientCounts.scaled(share), res.serverCounts.scaled(share)
	rows, err := rowsFromRun(c, res, ceil)
	if err != nil {
		return failedRows(c, fmt.Errorf("client result: %w", err))
	}
	for i := range rows {
		rows[i].Args = args
	}
	return rows
}

// finish renders the report to standard output, the output directory and, unless the run was
// interrupted, the README.
func finish(rep *Report, o *options, interrupted bool) int {
	var md, js bytes.Buffer
	if err := rep.writeMarkdown(&md); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		return 1
	}
	if err := rep.writeJSON(&js); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		return 1
	}
	if o.asJSON {
		os.Stdout.Write(js.Bytes())
	} else {
		os.Stdout.Write(md.Bytes())
	}
	code := 0
	if !rep.complete() {
		fmt.Fprintln(os.Stderr, "report: some measurements failed (see the table)")
		code = 1
	}
	if o.outDir != "" {
		for name, b := range map[string][]byte{"report.md": md.Bytes(), "report.json": js.Bytes()} {
			if err := os.WriteFile(filepath.Join(o.outDir, name), b, 0o644); err != nil {
				fmt.Fprintln(os.Stderr, "report:", err)
				code = 1
			}
		}
	}
	// A failed measurement goes into the README as well: it is what this run found.
	if o.readme != "" && len(rep.Rows) > 0 && !interrupted {
		if err := updateReadme(o.readme, md.String()); err != nil {
			fmt.Fprintln(os.Stderr, "report:", err)
			code = 1
		}
	}
	return code
}

// complete says whether every measurement ran.
func (r *Report) complete() bool {
	if len(r.Errors) > 0 {
		return false
	}
	for _, row := range r.Rows {
		if row.Error != "" {
			return false
		}
	}
	return true
}

// newRunner builds the binaries (unless given), picks the RoCE UDP port, prepares the output
// directory and asks the tools whether they write --out_json files. cleanup removes the working
// directory.
func newRunner(ctx context.Context, o *options) (*runner, func(), error) {
	r := &runner{gorxe: o.gorxeBin, udpceiling: o.udpceilingBin, client: o.client, server: o.server,
		udpPort: o.udpPort, timeout: o.timeout, maxProcs: toolMaxProcs(os.Getenv("GOMAXPROCS"), runtime.NumCPU())}
	dir, err := os.MkdirTemp("", "gorxe-bench-")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	fail := func(err error) (*runner, func(), error) {
		cleanup()
		return nil, nil, err
	}
	r.jsonDir, r.workDir = dir, dir
	for _, b := range []struct {
		dst *string
		pkg string
	}{{&r.gorxe, "github.com/gorxe/gorxe/cmd/gorxe"}, {&r.udpceiling, "github.com/gorxe/gorxe/test/bench/udpceiling"}} {
		if *b.dst != "" {
			continue
		}
		*b.dst = filepath.Join(dir, filepath.Base(b.pkg))
		progress("building %s", b.pkg)
		cmd := exec.CommandContext(ctx, o.goBin, "build", "-o", *b.dst, b.pkg)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fail(fmt.Errorf("building %s: %w", b.pkg, err))
		}
	}
	r.toolJSON, r.toolCounters = toolFlags(ctx, r.gorxe)
	if r.udpPort == 0 {
		p, err := freeUDPPort(o.client, o.server)
		if err != nil {
			return fail(err)
		}
		r.udpPort = p
	}
	if o.outDir != "" {
		r.logDir = filepath.Join(o.outDir, "logs")
		if err := os.MkdirAll(r.logDir, 0o755); err != nil {
			return fail(err)
		}
		r.jsonDir = r.logDir
	}
	return r, cleanup, nil
}

// toolFlags says whether the gorxe binary's perftest tools take --out_json and --counters; a
// binary from before they did has its results read from the text output, and no system calls.
func toolFlags(ctx context.Context, gorxe string) (outJSON, counters bool) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, gorxe, "write_bw", "--help").CombinedOutput()
	return bytes.Contains(out, []byte("--out_json_file")), bytes.Contains(out, []byte("--counters"))
}

// ceiling runs the UDP ceiling program and reads its JSON report.
func (r *runner) ceiling(ctx context.Context, d time.Duration) (*ceilingReport, error) {
	// Six throughput rows and two ping-pongs, each a little longer than d with its peer start-up.
	timeout := r.timeout + 10*d
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := startChild(ctx, "UDP ceiling", nil, r.udpceiling, "-json", "-duration", d.String(),
		"-sizes", "80,1040,4112", "-paths", pathMmsg+","+pathGSO, "-src", r.client.String(), "-dst", r.server.String())
	if err != nil {
		return nil, err
	}
	defer r.keepLog("udpceiling", c)
	if err := c.wait(timeout); err != nil {
		return nil, err
	}
	return parseCeiling([]byte(c.out.String()))
}

// progress tells the person waiting what is running; the report itself goes to standard output.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}
