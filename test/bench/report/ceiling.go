//go:build linux

package main

import (
	"encoding/json"
	"fmt"
)

// The I/O paths of the UDP ceiling program that the comparisons use.
const (
	pathMmsg = "sendmmsg" // one sendmmsg/recvmmsg entry per datagram
	pathGSO  = "gso+gro"  // UDP_SEGMENT on send, UDP_GRO on receive
)

// waitPoll is the UDP ceiling program's ping-pong whose ends busy-poll their sockets, the one
// the latency rows are set against: perftest's latency tools and gorxe's busy-poll their
// completion queues, and a ping-pong that sleeps in the receive pays the scheduler's wake-up,
// which those tools never wait for (30 µs against 2.7 µs half round trips on one virtual
// machine, 4 µs on another).
const waitPoll = "poll"

// roceOverhead is what a RoCE packet adds to its payload inside the UDP datagram: the 12-byte
// base transport header and the 4-byte ICRC. A full packet of MTU m is an (m+16)-byte datagram.
const roceOverhead = 16

// ceilingReport is the part of the UDP ceiling program's JSON report this program reads.
type ceilingReport struct {
	DurationS  float64       `json:"duration_s"`
	Src        string        `json:"src"`
	Dst        string        `json:"dst"`
	Throughput []ceilingRate `json:"throughput"`
	PingPong   []ceilingPing `json:"pingpong"`
}

type ceilingRate struct {
	Path              string  `json:"path"`
	DatagramBytes     int     `json:"datagram_bytes"`
	SentPPS           float64 `json:"sent_pps"`
	ReceivedPPS       float64 `json:"received_pps"`
	ReceivedBytesPerS float64 `json:"received_bytes_per_s"`
	Loss              float64 `json:"loss"`
	SegmentsPerSend   float64 `json:"segments_per_send,omitempty"`
	SegmentsPerRead   float64 `json:"segments_per_read,omitempty"`
	// The CPU time of each process over the datagrams it moved: the counterpart of gorxe's CPU
	// per message.
	SenderCPUNSPerDatagram   float64 `json:"sender_cpu_ns_per_datagram"`
	ReceiverCPUNSPerDatagram float64 `json:"receiver_cpu_ns_per_datagram"`
}

type ceilingPing struct {
	Path          string `json:"path"`
	Wait          string `json:"wait"` // sleep or poll
	DatagramBytes int    `json:"datagram_bytes"`
	Samples       int    `json:"samples"`
	HalfRTTP50NS  int64  `json:"half_rtt_p50_ns"`
	HalfRTTP99NS  int64  `json:"half_rtt_p99_ns"`
}

func parseCeiling(data []byte) (*ceilingReport, error) {
	var c ceilingReport
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("UDP ceiling report: %w", err)
	}
	if len(c.Throughput) == 0 && len(c.PingPong) == 0 {
		return nil, fmt.Errorf("UDP ceiling report has no measurements")
	}
	return &c, nil
}

// rate returns the throughput row of path at the datagram size, if the run measured it.
func (c *ceilingReport) rate(path string, datagram int) (ceilingRate, bool) {
	if c == nil {
		return ceilingRate{}, false
	}
	for _, t := range c.Throughput {
		if t.Path == path && t.DatagramBytes == datagram {
			return t, true
		}
	}
	return ceilingRate{}, false
}

// ping returns the ping-pong row of path whose ends wait as wait says, if the run measured it.
func (c *ceilingReport) ping(path, wait string) (ceilingPing, bool) {
	if c == nil {
		return ceilingPing{}, false
	}
	for _, p := range c.PingPong {
		if p.Path == path && p.Wait == wait {
			return p, true
		}
	}
	return ceilingPing{}, false
}
