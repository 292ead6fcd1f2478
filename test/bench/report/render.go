//go:build linux

package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gorxe/gorxe/test/bench/internal/benchout"
)

func (r *Report) writeJSON(w io.Writer) error { return benchout.WriteJSON(w, r) }

// writeMarkdown renders the machine, the gorxe table and the ceilings it was measured against.
func (r *Report) writeMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString(machineLine(r.Machine, r.Settings))
	b.WriteString("\n\n")
	b.WriteString("| measurement | gorxe | UDP ceiling (same run) | gorxe vs ceiling | target | CPU per message | " +
		syscallsHeader + " | " + switchesHeader + " |\n")
	b.WriteString("|---|---:|---:|---:|---|---:|---:|---:|\n")
	var defaults, cRows []Row
	for _, row := range r.Rows {
		if row.DefaultProcs {
			defaults = append(defaults, row)
			continue
		}
		if row.CPerftest {
			cRows = append(cRows, row)
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", row.Label, valueText(row),
			ceilingText(row), compareText(row.Compare), targetCell(row.Target), cpuText(row),
			syscallsText(row), switchesText(row))
	}
	if len(defaults) > 0 {
		b.WriteString("\n")
		b.WriteString(defaultsTable(r.Settings, r.Rows, defaults))
	}
	if len(cRows) > 0 {
		b.WriteString("\n")
		b.WriteString(cTable(r.Rows, cRows))
	}
	if c := r.Ceiling; c != nil {
		b.WriteString("\n")
		b.WriteString(ceilingTable(c))
	}
	for _, e := range r.Errors {
		fmt.Fprintf(&b, "\nNot measured: %s\n", e)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// machineLine says where and how the figures were taken.
func machineLine(m Machine, s Settings) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s on %d cores", m.Date, m.Cores)
	if m.CPU != "" {
		fmt.Fprintf(&b, " (%s)", m.CPU)
	}
	fmt.Fprintf(&b, ", Linux %s, %s", m.Kernel, m.GoVersion)
	if m.LoadAvg != "" {
		fmt.Fprintf(&b, "; load average %s at the start", m.LoadAvg)
		if m.busy() {
			b.WriteString(" (a shared, busy machine: absolute figures are low and noisy, the ratios less so)")
		}
	}
	fmt.Fprintf(&b, ". gorxe client on %s and server on %s as two processes", s.ClientAddr, s.ServerAddr)
	if s.GoMaxProcs > 0 {
		fmt.Fprintf(&b, " (GOMAXPROCS=%d each)", s.GoMaxProcs)
	}
	fmt.Fprintf(&b, ", %d s measured per bandwidth run (after %d s of warm-up), %d iterations per latency run.", s.DurationS, marginSeconds, s.LatencyIters)
	return b.String()
}

// busy says whether more work was runnable than the machine has cores when the run began.
func (m Machine) busy() bool {
	f := strings.Fields(m.LoadAvg)
	if len(f) == 0 || m.Cores == 0 {
		return false
	}
	load, err := strconv.ParseFloat(f[0], 64)
	return err == nil && load > float64(m.Cores)
}

func valueText(row Row) string {
	if row.Skipped != "" {
		return "not run: " + oneLine(row.Skipped)
	}
	if row.Error != "" {
		return "failed: " + oneLine(row.Error)
	}
	return quantity(row.Unit, row.Value)
}

// quantity formats a figure in its unit: decimal MB/s as the UDP ceiling program prints,
// millions of messages per second, microseconds, KiB.
func quantity(unit string, v float64) string {
	switch unit {
	case unitBytesPerS:
		return fmt.Sprintf("%.0f MB/s", v/1e6)
	case unitMsgsPerS:
		return fmt.Sprintf("%.3f M msg/s", v/1e6)
	case unitNS:
		return fmt.Sprintf("%.2f µs", v/1e3)
	case unitBytes:
		return fmt.Sprintf("%.1f KiB", v/1024)
	}
	return fmt.Sprintf("%g", v)
}

func ceilingText(row Row) string {
	c := row.Compare
	if c == nil {
		return "—"
	}
	unit := row.Unit
	if unit == unitMsgsPerS {
		return fmt.Sprintf("%.3f Mpps (%s)", c.CeilingValue/1e6, c.Ceiling)
	}
	return fmt.Sprintf("%s (%s)", quantity(unit, c.CeilingValue), c.Ceiling)
}

func compareText(c *Comparison) string {
	switch {
	case c == nil:
		return "—"
	case c.Ratio != nil:
		return fmt.Sprintf("%.2f×", *c.Ratio)
	case c.DiffNS != nil:
		return fmt.Sprintf("%+.2f µs", *c.DiffNS/1e3)
	}
	return "—"
}

func targetCell(t *Target) string {
	if t == nil {
		return ""
	}
	if t.Met {
		return t.Text + " ✓"
	}
	return t.Text + " ✗"
}

func cpuText(row Row) string {
	if row.CPUPerMsgNS == 0 {
		return ""
	}
	return fmt.Sprintf("%.2f µs", row.CPUPerMsgNS/1e3)
}

// The headers of the per-process columns.
const (
	syscallsHeader = "system calls per message, client / server (of which empty receives)"
	switchesHeader = "context switches per message, client / server"
)

// syscallsText gives both processes' sendmmsg and recvmmsg calls per message, with the receives
// that found nothing in brackets.
func syscallsText(row Row) string {
	side := func(c *ProcessCost) string {
		if c == nil || c.SystemCalls == nil {
			return "—"
		}
		return fmt.Sprintf("%.3f (%.3f)", *c.SystemCalls, *c.EmptyReceives)
	}
	if row.Client == nil && row.Server == nil {
		return ""
	}
	return side(row.Client) + " / " + side(row.Server)
}

// switchesText gives both processes' context switches per message.
func switchesText(row Row) string {
	side := func(c *ProcessCost) string {
		if c == nil {
			return "—"
		}
		return fmt.Sprintf("%.3f", c.ContextSwitches)
	}
	if row.Client == nil && row.Server == nil {
		return ""
	}
	return side(row.Client) + " / " + side(row.Server)
}

// defaultsTable sets the headline figures measured with the tools as a user starts them next to
// the same figures pinned, with the speed ratio and what the default run cost.
func defaultsTable(s Settings, all, defaults []Row) string {
	pinned := "pinned"
	if s.GoMaxProcs > 0 {
		pinned = fmt.Sprintf("GOMAXPROCS=%d each", s.GoMaxProcs)
	}
	byID := map[string]Row{}
	for _, r := range all {
		if !r.DefaultProcs {
			byID[r.ID] = r
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The headline figures again with the tools started as a user starts them, with no GOMAXPROCS in "+
		"their environment (the runtime's default), each run right after the same one pinned (%s). "+
		"Speed vs pinned is default ÷ pinned for rates and pinned ÷ default for times; the other columns are the default run's.\n\n", pinned)
	fmt.Fprintf(&b, "| measurement | %s | default GOMAXPROCS | speed vs pinned | target | default vs ceiling | CPU per message | %s | %s |\n",
		pinned, syscallsHeader, switchesHeader)
	b.WriteString("|---|---:|---:|---:|---|---:|---:|---:|---:|\n")
	for _, row := range defaults {
		base, pct, _ := strings.Cut(row.ID, defaultSuffix)
		pinnedText := "—"
		if p, ok := byID[base+pct]; ok {
			pinnedText = valueText(p)
		}
		speed := "—"
		if row.VsPinned != nil {
			speed = fmt.Sprintf("%.2f×", *row.VsPinned)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", row.Label, pinnedText, valueText(row), speed,
			targetCell(row.Target), compareText(row.Compare), cpuText(row), syscallsText(row), switchesText(row))
	}
	return b.String()
}

// cTable sets the figures of the distribution's C perftest tools on gorxe's C library next to
// the same figures of gorxe's Go tools in the run, with C ÷ Go for rates and C − Go for times.
func cTable(all, cRows []Row) string {
	byID := map[string]Row{}
	for _, r := range all {
		if !r.CPerftest && !r.DefaultProcs {
			byID[r.ID] = r
		}
	}
	var b strings.Builder
	b.WriteString("The distribution's C perftest tools (ib_write_bw, ib_send_bw, ib_send_lat) on gorxe's C library " +
		"(libibverbs.so.1 from make clib), client and server both C, on the same addresses and with the same arguments " +
		"as gorxe's Go tools, each run right after the Go tool's runs, started as a user starts them: LD_LIBRARY_PATH and " +
		"GORXE_ADDR, no GOMAXPROCS. C vs Go is C ÷ Go for rates and C − Go for times, against the Go tool's row above; " +
		"the other columns are the C run's.\n\n")
	fmt.Fprintf(&b, "| measurement | gorxe Go tool | C perftest on the library | C vs Go | target | C vs ceiling | CPU per message | %s |\n",
		switchesHeader)
	b.WriteString("|---|---:|---:|---:|---|---:|---:|---:|\n")
	for _, row := range cRows {
		goText := "—"
		if g, ok := byID[strings.TrimPrefix(row.ID, cToolPrefix)]; ok {
			goText = valueText(g)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", row.Label, goText, valueText(row),
			compareText(row.VsGo), targetCell(row.Target), compareText(row.Compare), cpuText(row), switchesText(row))
	}
	return b.String()
}

// ceilingTable lists the raw UDP figures of the run: delivered datagram and byte rates per path
// and size, then the ping-pong half round trips.
func ceilingTable(c *ceilingReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "UDP ceiling of the same run, %s → %s, two processes:\n\n", c.Src, c.Dst)
	b.WriteString("| UDP path | datagram | delivered | delivered | loss | CPU per datagram (sender + receiver) |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|\n")
	for _, t := range c.Throughput {
		fmt.Fprintf(&b, "| %s | %d B | %.3f Mpps | %.0f MB/s | %.1f%% | %.2f µs |\n", pathLabel(t.Path), t.DatagramBytes,
			t.ReceivedPPS/1e6, t.ReceivedBytesPerS/1e6, 100*t.Loss, (t.SenderCPUNSPerDatagram+t.ReceiverCPUNSPerDatagram)/1e3)
	}
	if len(c.PingPong) > 0 {
		b.WriteString("\n| UDP ping-pong | both ends | datagram | half RTT p50 | half RTT p99 |\n")
		b.WriteString("|---|---|---:|---:|---:|\n")
		for _, p := range c.PingPong {
			fmt.Fprintf(&b, "| %s | %s | %d B | %.2f µs | %.2f µs |\n", pathLabel(p.Path), waitLabel(p.Wait), p.DatagramBytes,
				float64(p.HalfRTTP50NS)/1e3, float64(p.HalfRTTP99NS)/1e3)
		}
	}
	return b.String()
}

// waitLabel says how a ping-pong's ends wait for a datagram.
func waitLabel(w string) string {
	if w == waitPoll {
		return "busy-poll"
	}
	return "sleep in recvmmsg"
}

func pathLabel(p string) string {
	switch p {
	case pathMmsg:
		return "sendmmsg/recvmmsg"
	case pathGSO:
		return "UDP_SEGMENT + UDP_GRO"
	}
	return p
}

// oneLine keeps an error message from breaking a table row.
func oneLine(s string) string {
	s = strings.ReplaceAll(strings.TrimSpace(s), "\n", " ")
	return strings.ReplaceAll(s, "|", "/")
}
