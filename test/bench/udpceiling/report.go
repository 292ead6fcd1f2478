package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gorxe/gorxe/test/bench/internal/benchout"
)

// report is the program's output; its JSON form is what other benchmark reports merge.
type report struct {
	DurationS  float64         `json:"duration_s"`
	Src        string          `json:"src"`
	Dst        string          `json:"dst"`
	Throughput []throughputRow `json:"throughput"`
	PingPong   []pingPongRow   `json:"pingpong"`
}

type throughputRow struct {
	Path              string  `json:"path"`
	DatagramBytes     int     `json:"datagram_bytes"`
	SentPPS           float64 `json:"sent_pps"`
	ReceivedPPS       float64 `json:"received_pps"`
	ReceivedBytesPerS float64 `json:"received_bytes_per_s"`
	Loss              float64 `json:"loss"`                        // fraction of sent datagrams never read
	SegmentsPerSend   float64 `json:"segments_per_send,omitempty"` // average datagrams per GSO send
	SegmentsPerRead   float64 `json:"segments_per_read,omitempty"` // average datagrams per GRO read
	// CPU time of each process over the datagrams it sent or read. On loopback the kernel's
	// delivery work runs in the sender's system calls, so most of a datagram's cost shows there.
	SenderCPUNSPerDatagram   float64 `json:"sender_cpu_ns_per_datagram"`
	ReceiverCPUNSPerDatagram float64 `json:"receiver_cpu_ns_per_datagram"`
}

type pingPongRow struct {
	Path          string `json:"path"`
	Wait          string `json:"wait"` // a wait: sleep or poll
	DatagramBytes int    `json:"datagram_bytes"`
	Samples       int    `json:"samples"`
	HalfRTTP50NS  int64  `json:"half_rtt_p50_ns"`
	HalfRTTP99NS  int64  `json:"half_rtt_p99_ns"`
}

func (r *report) writeJSON(w io.Writer) error { return benchout.WriteJSON(w, r) }

func (r *report) writeMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "UDP ceiling, %s -> %s, two processes, %s per row\n\n", r.Src, r.Dst,
		time.Duration(r.DurationS*float64(time.Second)))
	b.WriteString("| path | datagram | sent | received | received | loss | CPU per datagram: sender | receiver | per GSO send | per GRO read |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, t := range r.Throughput {
		fmt.Fprintf(&b, "| %s | %d B | %s | %s | %s | %.1f%% | %s | %s | %s | %s |\n",
			path(t.Path).label(), t.DatagramBytes, mpps(t.SentPPS), mpps(t.ReceivedPPS),
			rate(t.ReceivedBytesPerS), 100*t.Loss, benchout.Micros(int64(t.SenderCPUNSPerDatagram)),
			benchout.Micros(int64(t.ReceiverCPUNSPerDatagram)),
			perBatch(t.SegmentsPerSend), perBatch(t.SegmentsPerRead))
	}
	b.WriteString("\n| ping-pong | waits | datagram | half RTT p50 | half RTT p99 | samples |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|\n")
	for _, p := range r.PingPong {
		fmt.Fprintf(&b, "| %s | %s | %d B | %s | %s | %d |\n", path(p.Path).label(), p.Wait, p.DatagramBytes,
			benchout.Micros(p.HalfRTTP50NS), benchout.Micros(p.HalfRTTP99NS), p.Samples)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mpps(pps float64) string { return fmt.Sprintf("%.3f Mpps", pps/1e6) }

func rate(bytesPerS float64) string { return fmt.Sprintf("%.0f MB/s", bytesPerS/1e6) }

func perBatch(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", v)
}
