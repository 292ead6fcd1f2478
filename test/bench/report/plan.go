//go:build linux

package main

import (
	"fmt"
	"strconv"
)

// caseKind is what a gorxe measurement yields.
type caseKind int

const (
	kindBandwidth caseKind = iota // a _bw tool's bytes per second
	kindRate                      // a _bw tool's messages per second
	kindLatency                   // a _lat tool's typical and 99th-percentile times
)

// defaultMTU is the path MTU the tools settle on over loopback when -m is not given.
const defaultMTU = 4096

// benchCase is one run of a perftest tool pair.
type benchCase struct {
	kind   caseKind
	verb   string // WRITE, READ or SEND
	size   int    // message bytes
	mtu    int    // 0 leaves the tools' default
	qps    int
	target *targetSpec // on the figure, or a latency's median
	// tailTarget is on a latency's 99th percentile.
	tailTarget *targetSpec
	// defaultProcs runs the tools with no GOMAXPROCS in their environment, as a user starts
	// them, instead of the report's pinned setting (see toolMaxProcs).
	defaultProcs bool
	// cPerftest runs the distribution's C perftest tool of the same name (ib_write_bw for
	// write_bw) on gorxe's C library instead of gorxe's Go tool; its targets are on its figures
	// relative to the Go tool's in the same run (see compareWithGo).
	cPerftest bool
}

// targetKind says how a target is judged.
type targetKind int

const (
	targetMinRatio    targetKind = iota // gorxe / ceiling at least value
	targetMinValue                      // gorxe's own figure at least value
	targetMaxDiff                       // gorxe - ceiling at most value (ns)
	targetMinVsPinned                   // speed at the default GOMAXPROCS / pinned speed at least value
	targetMinVsGo                       // C tool / Go tool at least value
	targetMaxDiffVsGo                   // C tool - Go tool at most value (ns)
)

type targetSpec struct {
	kind  targetKind
	value float64
}

// id is the case's stable key in the JSON output, also the name of its log files.
func (c benchCase) id() string {
	s := fmt.Sprintf("%s-%d", c.tool(), c.size)
	if c.mtu != 0 {
		s += "-mtu" + strconv.Itoa(c.mtu)
	}
	if c.kind != kindLatency {
		s += "-q" + strconv.Itoa(c.qps)
	}
	if c.defaultProcs {
		s += defaultSuffix
	}
	return s
}

// defaultSuffix ends the id of a case run with the default GOMAXPROCS; without it, the id is
// that of the same case pinned.
const defaultSuffix = "-default"

// atDefault is the case run with the tools' default GOMAXPROCS. Its target is the
// fast-by-default one, judged against the pinned run by fastByDefault.
func (c benchCase) atDefault() benchCase {
	c.defaultProcs = true
	c.target, c.tailTarget = nil, nil
	return c
}

// The targets of the C perftest rows, from the issue: the C tools on the library reach this
// share of the Go tools' bandwidth and message rate, and their typical half round trip is at
// most this much longer.
const (
	cBandwidthVsGo = 0.9
	cRateVsGo      = 0.8
	cLatencyVsGoNS = 1000
)

// inC is the case run with the distribution's C perftest tool on gorxe's library.
func (c benchCase) inC() benchCase {
	c.cPerftest = true
	c.target, c.tailTarget = nil, nil
	switch c.kind {
	case kindBandwidth:
		c.target = &targetSpec{targetMinVsGo, cBandwidthVsGo}
	case kindRate:
		c.target = &targetSpec{targetMinVsGo, cRateVsGo}
	case kindLatency:
		c.target = &targetSpec{targetMaxDiffVsGo, cLatencyVsGoNS}
	}
	return c
}

// tool is the Go tool's name as `gorxe TOOL` takes it, or the C perftest binary's.
func (c benchCase) tool() string {
	suffix := "_bw"
	if c.kind == kindLatency {
		suffix = "_lat"
	}
	name := "send" + suffix
	switch c.verb {
	case "WRITE":
		name = "write" + suffix
	case "READ":
		name = "read" + suffix
	}
	if c.cPerftest {
		return cToolPrefix + name
	}
	return name
}

// cToolPrefix begins the name of each of perftest's C binaries; without it, the name is that of
// gorxe's Go tool, and a C row's id without it that of the Go row it is compared with.
const cToolPrefix = "ib_"

// cGIDIndex is the GID index the C tools are given (-x): gorxe's library lists a device's IPv4
// address at index 1, as rxe does; perftest's default, 0, is the link-local GID.
const cGIDIndex = 1

// marginSeconds is cut off each end of a timed bandwidth run (perftest's -f margin), so that a
// run is measured for the seconds asked: the first second of a run of many QPs goes to filling
// their rings for the first time and admitting them to the device's in-flight bound, which is
// not the rate they keep (1024 QPs of 64 KiB WRITEs measured 0.55-0.73x a single QP over a 2 s
// run without margins, 1.1x with them).
const marginSeconds = 1

// args are the tool's arguments on both sides, apart from addresses and the TCP port.
// measuredShare is the part of a run's length its result covers: the tools' CPU time, taken
// over the whole run, is scaled by it to match the messages counted.
func (c benchCase) measuredShare(seconds int) float64 {
	if c.kind == kindLatency {
		return 1
	}
	return float64(seconds) / float64(seconds+2*marginSeconds)
}

func (c benchCase) args(seconds, latIters int) []string {
	a := []string{"-s", strconv.Itoa(c.size)}
	if c.kind == kindLatency {
		a = append(a, "-n", strconv.Itoa(latIters))
	} else {
		a = append(a, "-D", strconv.Itoa(seconds+2*marginSeconds), "-f", strconv.Itoa(marginSeconds))
		if c.qps > 1 {
			a = append(a, "-q", strconv.Itoa(c.qps))
		}
	}
	if c.mtu != 0 {
		a = append(a, "-m", strconv.Itoa(c.mtu))
	}
	if c.cPerftest {
		a = append(a, "-x", strconv.Itoa(cGIDIndex))
	}
	return a
}

// effectiveMTU is the MTU the tools run at, which picks the ceiling's datagram size.
func (c benchCase) effectiveMTU() int {
	if c.mtu != 0 {
		return c.mtu
	}
	return defaultMTU
}

// plan lists the cases of a report: WRITE bandwidth over sizes and MTUs, READ bandwidth, the
// SEND message rate and the three latencies, then WRITE bandwidth and SEND rate at every QP
// count (a count of 1 is the first section's run and is not repeated). Each headline case (64 KiB
// WRITE at MTU 4096, 64 KiB READ, the 64 B SEND rate and half round trip, one QP each) is
// followed by the same case at the default GOMAXPROCS, so that the two run minutes apart at most,
// and the headline cases perftest's C tools compare on (all but READ) then by the C tool on
// gorxe's library.
func plan(qpCounts []int) []benchCase {
	const kib, mib = 1 << 10, 1 << 20
	var cases []benchCase
	for _, mtu := range []int{1024, 4096} {
		for _, size := range []int{4 * kib, 64 * kib, mib} {
			c := benchCase{kind: kindBandwidth, verb: "WRITE", size: size, mtu: mtu, qps: 1}
			if size == 64*kib {
				c.target = &targetSpec{targetMinRatio, 0.6}
			}
			cases = append(cases, c)
		}
	}
	cases = append(cases,
		benchCase{kind: kindBandwidth, verb: "READ", size: 64 * kib, mtu: 4096, qps: 1, target: &targetSpec{targetMinRatio, 0.5}},
		benchCase{kind: kindRate, verb: "SEND", size: 64, qps: 1, target: &targetSpec{targetMinValue, 1.2e6}},
		benchCase{kind: kindLatency, verb: "SEND", size: 64, qps: 1, target: &targetSpec{targetMaxDiff, 2000},
			tailTarget: &targetSpec{targetMaxDiff, 0}},
		benchCase{kind: kindLatency, verb: "WRITE", size: 64, qps: 1},
		benchCase{kind: kindLatency, verb: "READ", size: 64, qps: 1},
	)
	var withDefaults []benchCase
	for _, c := range cases {
		withDefaults = append(withDefaults, c)
		if c.headline() {
			withDefaults = append(withDefaults, c.atDefault())
			if c.verb != "READ" {
				withDefaults = append(withDefaults, c.inC())
			}
		}
	}
	cases = withDefaults
	seen := map[string]bool{}
	for _, c := range cases {
		seen[c.id()] = true
	}
	for _, q := range qpCounts {
		for _, c := range []benchCase{
			{kind: kindBandwidth, verb: "WRITE", size: 64 * kib, mtu: 4096, qps: q},
			{kind: kindRate, verb: "SEND", size: 64, qps: q},
		} {
			if !seen[c.id()] {
				seen[c.id()] = true
				cases = append(cases, c)
			}
		}
	}
	return cases
}

// headline says whether the case is one of the figures the README's summary rests on, which are
// also measured at the default GOMAXPROCS.
func (c benchCase) headline() bool {
	if c.qps != 1 || c.defaultProcs || c.cPerftest {
		return false
	}
	switch {
	case c.kind == kindBandwidth && (c.verb == "WRITE" || c.verb == "READ"):
		return c.size == 64<<10 && c.effectiveMTU() == 4096
	case c.verb == "SEND":
		return c.size == 64
	}
	return false
}
