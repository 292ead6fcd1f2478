//go:build linux

package main

import (
	"fmt"
	"strconv"
	"strings"
)

// The units of perftest's bandwidth columns: MB is 2^20 bytes, Gb is 10^9 bits.
const (
	bytesPerMB = 1 << 20
	bytesPerGb = 125_000_000
)

// bwResult is the result line of a perftest bandwidth tool.
type bwResult struct {
	Size        int
	Messages    uint64  // perftest's #iterations: every message of every QP
	BytesPerS   float64 // the average bandwidth
	MsgsPerS    float64
	PeakBytesPS float64 // zero when the tool skipped the peak search
}

// latResult is the result line of a perftest latency tool, in microseconds as printed. Each
// figure is what the tool reports: half a round trip for SEND and WRITE, a whole one for READ.
type latResult struct {
	Size       int
	Iterations uint64
	MinUS      float64
	MaxUS      float64
	TypicalUS  float64
	AvgUS      float64
	StdevUS    float64
	P99US      float64
	P999US     float64
}

// resultLine finds the line under perftest's " #bytes" header and returns the header and the
// line's fields. Tools print the table once per size; gorxe runs one size, so the first counts.
func resultLine(out string) (header string, fields []string, err error) {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, " #bytes") {
			continue
		}
		if i+1 >= len(lines) || strings.TrimSpace(lines[i+1]) == "" || strings.HasPrefix(lines[i+1], "---") {
			return "", nil, fmt.Errorf("perftest output has a result header but no result")
		}
		return l, strings.Fields(lines[i+1]), nil
	}
	return "", nil, fmt.Errorf("perftest output has no result table")
}

// parseBW reads the result of write_bw, read_bw, send_bw or atomic_bw.
func parseBW(out string) (bwResult, error) {
	var r bwResult
	header, f, err := resultLine(out)
	if err != nil {
		return r, err
	}
	unit := float64(bytesPerMB)
	switch {
	case strings.Contains(header, "BW average[Gb/sec]"):
		unit = bytesPerGb
	case !strings.Contains(header, "BW average[MB/sec]"):
		return r, fmt.Errorf("not a bandwidth result header: %q", strings.TrimSpace(header))
	}
	if len(f) != 5 {
		return r, fmt.Errorf("bandwidth result has %d fields, want 5: %q", len(f), strings.Join(f, " "))
	}
	nums, err := floats(f[2:])
	if err != nil {
		return r, err
	}
	if r.Size, err = strconv.Atoi(f[0]); err != nil {
		return r, fmt.Errorf("bandwidth result size: %w", err)
	}
	if r.Messages, err = strconv.ParseUint(f[1], 10, 64); err != nil {
		return r, fmt.Errorf("bandwidth result iterations: %w", err)
	}
	r.PeakBytesPS, r.BytesPerS, r.MsgsPerS = nums[0]*unit, nums[1]*unit, nums[2]*1e6
	return r, nil
}

// parseLat reads the result of write_lat, read_lat, send_lat or atomic_lat run by iterations
// (a run by duration, -D, prints only an average).
func parseLat(out string) (latResult, error) {
	var r latResult
	header, f, err := resultLine(out)
	if err != nil {
		return r, err
	}
	if !strings.Contains(header, "t_typical[usec]") {
		return r, fmt.Errorf("not a latency result header with percentiles: %q", strings.TrimSpace(header))
	}
	if len(f) != 9 {
		return r, fmt.Errorf("latency result has %d fields, want 9: %q", len(f), strings.Join(f, " "))
	}
	nums, err := floats(f[2:])
	if err != nil {
		return r, err
	}
	if r.Size, err = strconv.Atoi(f[0]); err != nil {
		return r, fmt.Errorf("latency result size: %w", err)
	}
	if r.Iterations, err = strconv.ParseUint(f[1], 10, 64); err != nil {
		return r, fmt.Errorf("latency result iterations: %w", err)
	}
	r.MinUS, r.MaxUS, r.TypicalUS, r.AvgUS, r.StdevUS, r.P99US, r.P999US =
		nums[0], nums[1], nums[2], nums[3], nums[4], nums[5], nums[6]
	return r, nil
}

func floats(fields []string) ([]float64, error) {
	out := make([]float64, len(fields))
	for i, s := range fields {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("perftest result field %q: %w", s, err)
		}
		out[i] = v
	}
	return out, nil
}
