//go:build linux

package main

import (
	"fmt"
	"strings"
	"time"
)

// bwRow turns a bandwidth tool's result into its row: WRITE and READ bytes per second against
// the GSO+GRO byte rate at the datagram size of a full packet of the run's MTU, SEND messages
// per second against the sendmmsg datagram rate at the datagram size of one such message.
func bwRow(c benchCase, r bwResult, cpu time.Duration, ceil *ceilingReport) Row {
	row := baseRow(c)
	row.Messages = r.Messages
	if r.Messages > 0 {
		row.CPUPerMsgNS = float64(cpu.Nanoseconds()) / float64(r.Messages)
	}
	if c.kind == kindRate {
		row.Unit, row.Value = unitMsgsPerS, r.MsgsPerS
		datagram := c.size + roceOverhead
		if t, ok := ceil.rate(pathMmsg, datagram); ok && t.ReceivedPPS > 0 {
			row.Compare = ratio(fmt.Sprintf("sendmmsg, %d B datagrams", datagram), row.Value, t.ReceivedPPS)
		}
	} else {
		row.Unit, row.Value = unitBytesPerS, r.BytesPerS
		datagram := c.effectiveMTU() + roceOverhead
		if t, ok := ceil.rate(pathGSO, datagram); ok && t.ReceivedBytesPerS > 0 {
			row.Compare = ratio(fmt.Sprintf("GSO+GRO, %d B datagrams", datagram), row.Value, t.ReceivedBytesPerS)
		}
	}
	setTarget(&row, c.target)
	return row
}

// setTarget judges a target on the row's ceiling comparison now, or keeps a C row's target
// for compareWithGo.
func setTarget(row *Row, t *targetSpec) {
	if row.CPerftest {
		row.goal = t
		return
	}
	row.Target = judge(t, row.Value, row.Compare)
}

// latRows turns a latency tool's result into two rows, the typical (median) and the 99th
// percentile half round trip, against the same percentiles of a busy-polled UDP ping-pong. READ latency is
// reported by the tool as a whole round trip and is halved here to compare like with like.
func latRows(c benchCase, r latResult, cpu time.Duration, ceil *ceilingReport) []Row {
	div := 1.0
	if c.verb == "READ" {
		div = 2
	}
	ping, havePing := ceil.ping(pathMmsg, waitPoll)
	rows := make([]Row, 2)
	for i, p := range []struct {
		name  string
		us    float64
		udpNS int64
	}{{"p50", r.TypicalUS, ping.HalfRTTP50NS}, {"p99", r.P99US, ping.HalfRTTP99NS}} {
		row := baseRow(c)
		row.ID += "-" + p.name
		row.Label = latLabel(c, p.name)
		row.Unit, row.Value = unitNS, p.us*1000/div
		row.Messages = r.Iterations
		if r.Iterations > 0 {
			row.CPUPerMsgNS = float64(cpu.Nanoseconds()) / float64(r.Iterations)
		}
		if havePing && p.udpNS > 0 {
			row.Compare = difference("polled UDP ping-pong "+p.name, row.Value, float64(p.udpNS))
		}
		if p.name == "p50" {
			setTarget(&row, c.target)
		} else {
			setTarget(&row, c.tailTarget)
		}
		rows[i] = row
	}
	return rows
}

// failedRows stands in for the rows of a case whose run failed.
func failedRows(c benchCase, err error) []Row {
	rows := emptyRows(c)
	for i := range rows {
		rows[i].Error = err.Error()
	}
	return rows
}

// skippedRows stand in for the rows of a case this machine cannot run, saying why.
func skippedRows(c benchCase, why string) []Row {
	rows := emptyRows(c)
	for i := range rows {
		rows[i].Skipped = why
	}
	return rows
}

// emptyRows are the rows of a case, without figures.
func emptyRows(c benchCase) []Row {
	if c.kind != kindLatency {
		row := baseRow(c)
		row.Unit = unitBytesPerS
		if c.kind == kindRate {
			row.Unit = unitMsgsPerS
		}
		return []Row{row}
	}
	var rows []Row
	for _, name := range []string{"p50", "p99"} {
		row := baseRow(c)
		row.ID += "-" + name
		row.Label = latLabel(c, name)
		row.Unit = unitNS
		rows = append(rows, row)
	}
	return rows
}

func baseRow(c benchCase) Row {
	return Row{ID: c.id(), Label: label(c), Tool: c.tool(), DefaultProcs: c.defaultProcs, CPerftest: c.cPerftest}
}

// compareWithGo relates each measured C perftest row to the row of gorxe's Go tool for the same
// measurement in the same run (pinned GOMAXPROCS, as the C run): rates as C ÷ Go, times as
// C − Go, and judges the C row's target on that. A row whose Go counterpart failed or was not
// run gets neither, and a target it keeps counts as missed.
func compareWithGo(rows []Row) {
	goRows := map[string]Row{}
	for _, r := range rows {
		if !r.CPerftest && !r.DefaultProcs && r.Error == "" && r.Skipped == "" {
			goRows[r.ID] = r
		}
	}
	for i := range rows {
		r := &rows[i]
		if !r.CPerftest || r.Error != "" || r.Skipped != "" {
			continue
		}
		if g, ok := goRows[strings.TrimPrefix(r.ID, cToolPrefix)]; ok && g.Value > 0 {
			what := "gorxe " + g.Tool
			if r.Unit == unitNS {
				r.VsGo = difference(what, r.Value, g.Value)
			} else {
				r.VsGo = ratio(what, r.Value, g.Value)
			}
		}
		r.Target = judge(r.goal, r.Value, r.VsGo)
	}
}

// fastByDefaultShare is the target for the tools as a user starts them: at least this
// share of the speed of the pinned run.
const fastByDefaultShare = 0.9

// fastByDefault relates each measured default-GOMAXPROCS row to the pinned row of the same
// measurement: VsPinned is its speed relative to it (default ÷ pinned for rates, pinned ÷
// default for times, so that 1 is as fast and less is slower), judged against
// fastByDefaultShare. A row whose pinned counterpart failed or was not run gets neither.
func fastByDefault(rows []Row) {
	pinned := map[string]Row{}
	for _, r := range rows {
		if !r.DefaultProcs && r.Error == "" {
			pinned[r.ID] = r
		}
	}
	spec := &targetSpec{targetMinVsPinned, fastByDefaultShare}
	for i := range rows {
		r := &rows[i]
		if !r.DefaultProcs || r.Error != "" {
			continue
		}
		// The id of a latency row ends in its percentile, after the default suffix.
		base, pct, _ := strings.Cut(r.ID, defaultSuffix)
		p, ok := pinned[base+pct]
		if !ok || p.Value <= 0 || r.Value <= 0 {
			continue
		}
		speed := r.Value / p.Value
		if r.Unit == unitNS {
			speed = p.Value / r.Value
		}
		r.VsPinned = &speed
		r.Target = &Target{Text: targetText(spec), Met: speed >= spec.value}
	}
}

// label names a case in the table.
func label(c benchCase) string {
	s := fmt.Sprintf("RC %s %s", c.verb, sizeText(c.size))
	switch c.kind {
	case kindRate:
		s += " message rate"
	case kindBandwidth:
		s += fmt.Sprintf(", MTU %d", c.effectiveMTU())
	}
	if c.qps > 1 {
		s += fmt.Sprintf(", %d QPs", c.qps)
	}
	return s
}

func latLabel(c benchCase, pct string) string {
	s := fmt.Sprintf("RC %s %s half RTT %s", c.verb, sizeText(c.size), pct)
	if c.verb == "READ" {
		s += " (round trip ÷ 2)"
	}
	return s
}

// sizeText writes a message size as perftest users think of it: 64 B, 4 KiB, 1 MiB.
func sizeText(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

func ratio(what string, value, ceiling float64) *Comparison {
	r := value / ceiling
	return &Comparison{Ceiling: what, CeilingValue: ceiling, Ratio: &r}
}

func difference(what string, value, ceiling float64) *Comparison {
	d := value - ceiling
	return &Comparison{Ceiling: what, CeilingValue: ceiling, DiffNS: &d}
}

// judge evaluates a target; a target that needs a ceiling the run lacks counts as missed.
func judge(t *targetSpec, value float64, cmp *Comparison) *Target {
	if t == nil {
		return nil
	}
	out := &Target{Text: targetText(t)}
	switch t.kind {
	case targetMinRatio, targetMinVsGo:
		out.Met = cmp != nil && cmp.Ratio != nil && *cmp.Ratio >= t.value
	case targetMinValue:
		out.Met = value >= t.value
	case targetMaxDiff, targetMaxDiffVsGo:
		out.Met = cmp != nil && cmp.DiffNS != nil && *cmp.DiffNS <= t.value
	}
	return out
}

func targetText(t *targetSpec) string {
	switch t.kind {
	case targetMinRatio:
		return fmt.Sprintf("≥ %g× ceiling", t.value)
	case targetMinValue:
		return fmt.Sprintf("≥ %g M msg/s", t.value/1e6)
	case targetMinVsPinned:
		return fmt.Sprintf("≥ %g× pinned", t.value)
	case targetMinVsGo:
		return fmt.Sprintf("≥ %g× Go", t.value)
	case targetMaxDiffVsGo:
		return fmt.Sprintf("≤ Go + %g µs", t.value/1000)
	case targetMaxDiff:
		if t.value == 0 {
			return "≤ UDP"
		}
	}
	return fmt.Sprintf("≤ UDP + %g µs", t.value/1000)
}
