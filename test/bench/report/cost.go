//go:build linux

package main

import (
	"strconv"
	"strings"
)

// The device counters of a tool's --counters output that count its system calls.
const (
	counterSendCalls  = "net_send_calls"
	counterRecvCalls  = "net_recv_calls"
	counterRecvEmpty  = "net_recv_empty"
	countersTitleHead = "counters of "
)

// processCounts are what one tool process did over its whole life: its context switches, from
// getrusage, and the system calls its device counted, when the tool printed them.
type processCounts struct {
	voluntary, involuntary float64
	sendCalls, recvCalls   float64
	emptyRecvs             float64
	haveCalls              bool
}

// scaled is p over the share of the run its result covers, as CPU time is scaled.
func (p processCounts) scaled(share float64) processCounts {
	p.voluntary *= share
	p.involuntary *= share
	p.sendCalls *= share
	p.recvCalls *= share
	p.emptyRecvs *= share
	return p
}

// perMessage divides p by the messages of the run; nil without messages.
func (p processCounts) perMessage(messages uint64) *ProcessCost {
	if messages == 0 {
		return nil
	}
	n := float64(messages)
	c := &ProcessCost{ContextSwitches: (p.voluntary + p.involuntary) / n, VoluntarySwitches: p.voluntary / n}
	if p.haveCalls {
		calls, empty := (p.sendCalls+p.recvCalls)/n, p.emptyRecvs/n
		c.SystemCalls, c.EmptyReceives = &calls, &empty
	}
	return c
}

// addCalls reads the system-call counters from a tool's --counters output into p. A tool prints
// only non-zero counters, so a device that printed its table but not these made no such call;
// output without the table, or from a gorxe that does not count its calls (no net_send_calls
// where it sent packets), leaves p without calls.
func (p *processCounts) addCalls(out string) {
	c, ok := parseToolCounters(out)
	if !ok || (c["sent_pkts"] > 0 && c[counterSendCalls] == 0) {
		return
	}
	p.sendCalls, p.recvCalls, p.emptyRecvs = float64(c[counterSendCalls]), float64(c[counterRecvCalls]), float64(c[counterRecvEmpty])
	p.haveCalls = true
}

// parseToolCounters reads the first "counters of DEVICE:" table of a tool's output: one
// "name value" line per non-zero counter, or "all zero".
func parseToolCounters(out string) (map[string]uint64, bool) {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, countersTitleHead) || !strings.HasSuffix(l, ":") {
			continue
		}
		c := map[string]uint64{}
		for _, l := range lines[i+1:] {
			if !strings.HasPrefix(l, "  ") {
				break
			}
			f := strings.Fields(l)
			if len(f) != 2 {
				break
			}
			v, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				break
			}
			c[f[0]] = v
		}
		return c, true
	}
	return nil, false
}
