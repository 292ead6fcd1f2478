//go:build linux

package main

import (
	"encoding/json"
	"fmt"
)

// perftestJSON is the file a perftest tool writes with --out_json: the test's parameters and one
// result, with the same figures and precision as its text output. The report passes no
// --report_gbits, so bandwidth is in MB (2^20 bytes) per second.
type perftestJSON struct {
	TestInfo struct {
		Test string `json:"test"`
		QPs  int    `json:"Number_of_qps"`
		MTU  int    `json:"Mtu"`
		Conn string `json:"Connection_type"`
	} `json:"test_info"`
	Results struct {
		MsgSize    int      `json:"MsgSize"`
		Iterations uint64   `json:"n_iterations"`
		BWPeak     *float64 `json:"BW_peak"`
		BWAverage  *float64 `json:"BW_average"`
		MsgRate    *float64 `json:"MsgRate"`
		TMin       float64  `json:"t_min"`
		TMax       float64  `json:"t_max"`
		TTypical   *float64 `json:"t_typical"`
		TAvg       float64  `json:"t_avg"`
		TStdev     float64  `json:"t_stdev"`
		P99        *float64 `json:"percentile_99"`
		P999       float64  `json:"percentile_99.9"`
	} `json:"results"`
}

func decodePerftestJSON(data []byte) (*perftestJSON, error) {
	var j perftestJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, fmt.Errorf("perftest JSON: %w", err)
	}
	return &j, nil
}

// checkRun says whether the tool ran what the case asked for: the QP count, and the MTU when
// the case sets one (the two sides agree on the smaller of their MTUs).
func (j *perftestJSON) checkRun(c benchCase) error {
	if j.TestInfo.QPs != 0 && j.TestInfo.QPs != c.qps {
		return fmt.Errorf("the tool ran %d QPs, not %d", j.TestInfo.QPs, c.qps)
	}
	if c.mtu != 0 && j.TestInfo.MTU != 0 && j.TestInfo.MTU != c.mtu {
		return fmt.Errorf("the tool ran at MTU %d, not %d", j.TestInfo.MTU, c.mtu)
	}
	return nil
}

// bw reads a bandwidth result.
func (j *perftestJSON) bw() (bwResult, error) {
	r := j.Results
	if r.BWAverage == nil || r.MsgRate == nil {
		return bwResult{}, fmt.Errorf("perftest JSON has no bandwidth result (test %q)", j.TestInfo.Test)
	}
	out := bwResult{Size: r.MsgSize, Messages: r.Iterations, BytesPerS: *r.BWAverage * bytesPerMB, MsgsPerS: *r.MsgRate * 1e6}
	if r.BWPeak != nil {
		out.PeakBytesPS = *r.BWPeak * bytesPerMB
	}
	return out, nil
}

// lat reads a latency result with percentiles.
func (j *perftestJSON) lat() (latResult, error) {
	r := j.Results
	if r.TTypical == nil || r.P99 == nil {
		return latResult{}, fmt.Errorf("perftest JSON has no latency result with percentiles (test %q)", j.TestInfo.Test)
	}
	return latResult{Size: r.MsgSize, Iterations: r.Iterations, MinUS: r.TMin, MaxUS: r.TMax, TypicalUS: *r.TTypical,
		AvgUS: r.TAvg, StdevUS: r.TStdev, P99US: *r.P99, P999US: r.P999}, nil
}

// rowsFromRun turns a finished run into its rows, from the client's --out_json file when the
// tool wrote one and from its text output otherwise.
func rowsFromRun(c benchCase, res pairResult, ceil *ceilingReport) ([]Row, error) {
	var (
		br  bwResult
		lr  latResult
		err error
	)
	if res.clientJSON != nil {
		var j *perftestJSON
		if j, err = decodePerftestJSON(res.clientJSON); err != nil {
			return nil, err
		}
		if err = j.checkRun(c); err != nil {
			return nil, err
		}
		if c.kind == kindLatency {
			lr, err = j.lat()
		} else {
			br, err = j.bw()
		}
	} else if c.kind == kindLatency {
		lr, err = parseLat(res.client)
	} else {
		br, err = parseBW(res.client)
	}
	if err != nil {
		return nil, err
	}
	if c.kind == kindLatency {
		return latRows(c, lr, res.cpu, ceil), nil
	}
	row := bwRow(c, br, res.cpu, ceil)
	row.Client, row.Server = res.clientCounts.perMessage(row.Messages), res.serverCounts.perMessage(row.Messages)
	return []Row{row}, nil
}
