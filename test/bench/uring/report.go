package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gorxe/gorxe/test/bench/internal/benchout"
)

// report is the program's output.
type report struct {
	DurationS  float64         `json:"duration_s"`
	Src        string          `json:"src"`
	Dst        string          `json:"dst"`
	Uring      string          `json:"uring_refused,omitempty"` // why every io_uring row is skipped
	Poll       []pollCostRow   `json:"poll,omitempty"`
	Visibility []visibilityRow `json:"visibility,omitempty"`
	Affinity   []affinityRow   `json:"affinity,omitempty"`
	PingPong   []pingPongRow   `json:"pingpong,omitempty"`
	Stream     []streamRow     `json:"stream,omitempty"`
}

// pollCostRow is the cost of one busy-poll check on an idle socket.
type pollCostRow struct {
	Check            string  `json:"check"`
	NSPerCheck       float64 `json:"ns_per_check"`
	SyscallsPerCheck float64 `json:"syscalls_per_check"`
}

// visibilityRow: of Trials datagrams, how many completions a thread spinning on the CQ ring
// without system calls saw within the window, how soon, and how many the SQ flags hinted at.
type visibilityRow struct {
	Mode      string `json:"mode"`
	Trials    int    `json:"trials"`
	WindowMS  int64  `json:"window_ms"`
	Seen      int    `json:"seen"`
	SeenP50NS int64  `json:"seen_p50_ns"`
	SeenP99NS int64  `json:"seen_p99_ns"`
	Hinted    int    `json:"hinted"`
	HintP50NS int64  `json:"hint_p50_ns"`
	Skipped   string `json:"skipped,omitempty"`
}

// affinityRow: the receive armed by a thread that then sleeps; another thread sends, spins and
// enters the kernel. Seen counts the completions it got within the window.
type affinityRow struct {
	Mode      string `json:"mode"`
	Trials    int    `json:"trials"`
	WindowMS  int64  `json:"window_ms"`
	Seen      int    `json:"seen"`
	SeenP50NS int64  `json:"seen_p50_ns"`
	EnterErr  string `json:"enter_error,omitempty"`
	Skipped   string `json:"skipped,omitempty"`
}

type pingPongRow struct {
	Path                  string  `json:"path"`
	DatagramBytes         int     `json:"datagram_bytes"`
	Samples               int     `json:"samples"`
	HalfRTTP50NS          int64   `json:"half_rtt_p50_ns"`
	HalfRTTP99NS          int64   `json:"half_rtt_p99_ns"`
	SyscallsPerDatagram   float64 `json:"syscalls_per_datagram"` // both ends, sends and polls
	EmptyPollsPerDatagram float64 `json:"empty_polls_per_datagram"`
	Skipped               string  `json:"skipped,omitempty"`
}

type streamRow struct {
	Sender               string  `json:"sender"`
	Receiver             string  `json:"receiver"`
	Ring                 string  `json:"ring,omitempty"`
	Sent                 uint64  `json:"sent"`
	Delivered            uint64  `json:"delivered"`
	DeliveredPPS         float64 `json:"delivered_pps"`
	Loss                 float64 `json:"loss"`
	SendCallsPerDatagram float64 `json:"send_calls_per_datagram"`
	SendCPUNSPerDatagram float64 `json:"send_cpu_ns_per_datagram"` // the sending thread; on loopback it includes delivery
	RecvCallsPerDatagram float64 `json:"recv_calls_per_datagram"`
	RecvEmptyPerDatagram float64 `json:"recv_empty_per_datagram"`
	DatagramsPerRead     float64 `json:"datagrams_per_read"`  // per recvmmsg entry or completion with data
	RearmsPerDatagram    float64 `json:"rearms_per_datagram"` // multishot receives armed again (out of buffers)
	Skipped              string  `json:"skipped,omitempty"`
}

func (r *report) writeJSON(w io.Writer) error { return benchout.WriteJSON(w, r) }

func (r *report) writeMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "io_uring against the system-call path, %s -> %s, %s per timed row\n\n", r.Src, r.Dst,
		time.Duration(r.DurationS*float64(time.Second)))
	if r.Uring != "" {
		fmt.Fprintf(&b, "io_uring rows skipped: %s\n\n", r.Uring)
	}
	if len(r.Poll) > 0 {
		b.WriteString("| empty busy-poll check | per check | system calls |\n|---|---:|---:|\n")
		for _, p := range r.Poll {
			fmt.Fprintf(&b, "| %s | %.0f ns | %.0f |\n", p.Check, p.NSPerCheck, p.SyscallsPerCheck)
		}
		b.WriteString("\n")
	}
	if len(r.Visibility) > 0 {
		b.WriteString("| ring mode | completions seen spinning on the CQ, no system call | p50 | p99 | SQ TASKRUN hint seen | p50 |\n|---|---:|---:|---:|---:|---:|\n")
		for _, v := range r.Visibility {
			if v.Skipped != "" {
				fmt.Fprintf(&b, "| %s | skipped: %s | | | | |\n", v.Mode, v.Skipped)
				continue
			}
			fmt.Fprintf(&b, "| %s | %d of %d within %d ms | %s | %s | %d | %s |\n", v.Mode, v.Seen, v.Trials, v.WindowMS,
				benchout.Micros(v.SeenP50NS), benchout.Micros(v.SeenP99NS), v.Hinted, benchout.Micros(v.HintP50NS))
		}
		b.WriteString("\n")
	}
	if len(r.Affinity) > 0 {
		b.WriteString("| ring mode, receive armed by a sleeping thread | seen by another thread spinning and entering | p50 | its io_uring_enter |\n|---|---:|---:|---|\n")
		for _, v := range r.Affinity {
			if v.Skipped != "" {
				fmt.Fprintf(&b, "| %s | skipped: %s | | |\n", v.Mode, v.Skipped)
				continue
			}
			enter := v.EnterErr
			if enter == "" {
				enter = "ok"
			}
			fmt.Fprintf(&b, "| %s | %d of %d within %d ms | %s | %s |\n", v.Mode, v.Seen, v.Trials, v.WindowMS, benchout.Micros(v.SeenP50NS), enter)
		}
		b.WriteString("\n")
	}
	if len(r.PingPong) > 0 {
		b.WriteString("| ping-pong, busy polling | half RTT p50 | p99 | system calls per datagram | of them empty polls | samples |\n|---|---:|---:|---:|---:|---:|\n")
		for _, p := range r.PingPong {
			if p.Skipped != "" {
				fmt.Fprintf(&b, "| %s | skipped: %s | | | | |\n", p.Path, p.Skipped)
				continue
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %.2f | %.2f | %d |\n", p.Path, benchout.Micros(p.HalfRTTP50NS), benchout.Micros(p.HalfRTTP99NS),
				p.SyscallsPerDatagram, p.EmptyPollsPerDatagram, p.Samples)
		}
		b.WriteString("\n")
	}
	if len(r.Stream) > 0 {
		b.WriteString("| sender | receiver | ring | delivered | loss | sender calls per datagram | sender CPU per datagram | receiver calls per datagram | of them empty | datagrams per read | re-arms per datagram |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, s := range r.Stream {
			if s.Skipped != "" {
				fmt.Fprintf(&b, "| %s | %s | | skipped: %s | | | | | | | |\n", s.Sender, s.Receiver, s.Skipped)
				continue
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %.3f Mpps | %.1f%% | %.3f | %s | %.3f | %.3f | %.1f | %.4f |\n", s.Sender, s.Receiver, s.Ring,
				s.DeliveredPPS/1e6, 100*s.Loss, s.SendCallsPerDatagram, benchout.Micros(int64(s.SendCPUNSPerDatagram)),
				s.RecvCallsPerDatagram, s.RecvEmptyPerDatagram, s.DatagramsPerRead, s.RearmsPerDatagram)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
