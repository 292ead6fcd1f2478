//go:build linux

package main

// Report is everything one run measured; its JSON form is the program's -json output.
type Report struct {
	Machine  Machine        `json:"machine"`
	Settings Settings       `json:"settings"`
	Ceiling  *ceilingReport `json:"udp_ceiling,omitempty"`
	Rows     []Row          `json:"rows"`
	// Errors lists what could not be measured at all (a ceiling run that failed, say); a failed
	// gorxe figure stays in Rows with its own error.
	Errors []string `json:"errors,omitempty"`
}

// Settings are the knobs the run used.
type Settings struct {
	DurationS     int    `json:"duration_s"`
	LatencyIters  int    `json:"latency_iterations"`
	QPCounts      []int  `json:"qp_counts"`
	IdleQPs       int    `json:"idle_qps"`
	ClientAddr    string `json:"client_addr"`
	ServerAddr    string `json:"server_addr"`
	RoCEUDPPort   int    `json:"roce_udp_port"`
	ProcessesNote string `json:"processes"`
	// GoMaxProcs is the GOMAXPROCS each tool process ran with (see toolMaxProcs).
	GoMaxProcs int `json:"gomaxprocs,omitempty"`
}

// Row is one gorxe figure, with the ceiling it is compared against and its target.
type Row struct {
	ID    string   `json:"id"`
	Label string   `json:"label"`
	Tool  string   `json:"tool,omitempty"`
	Args  []string `json:"args,omitempty"`
	// Unit is one of unitBytesPerS, unitMsgsPerS, unitNS and unitBytes.
	Unit  string  `json:"unit"`
	Value float64 `json:"value"`

	Compare *Comparison `json:"compare,omitempty"`
	Target  *Target     `json:"target,omitempty"`

	// Messages and CPUPerMsgNS: the user and system time of both processes (client and server)
	// over the messages the run moved, start-up and connection set-up included.
	Messages    uint64  `json:"messages,omitempty"`
	CPUPerMsgNS float64 `json:"cpu_per_message_ns,omitempty"`

	// Client and Server are each process's context switches and system calls per message, on
	// the bandwidth and message-rate rows.
	Client *ProcessCost `json:"client,omitempty"`
	Server *ProcessCost `json:"server,omitempty"`

	// DefaultProcs marks a run of the tools as a user starts them, with no GOMAXPROCS in their
	// environment, rather than with Settings.GoMaxProcs. VsPinned is then its speed relative to
	// the same measurement's pinned row (see fastByDefault), and Target the fast-by-default one.
	DefaultProcs bool     `json:"default_gomaxprocs,omitempty"`
	VsPinned     *float64 `json:"vs_pinned,omitempty"`

	// CPerftest marks a run of the distribution's C perftest tool on gorxe's C library; VsGo is
	// its figure relative to the same measurement of gorxe's Go tool in this run (see
	// compareWithGo), and Target is on that.
	CPerftest bool        `json:"c_perftest,omitempty"`
	VsGo      *Comparison `json:"vs_go,omitempty"`
	// goal is a C row's target, judged once the Go row it is relative to is known.
	goal *targetSpec

	Error string `json:"error,omitempty"`
	// Skipped says why the measurement could not run on this machine (no perftest installed, the
	// C library cannot be built); unlike Error, it is not a failure of the run.
	Skipped string `json:"skipped,omitempty"`
}

// ProcessCost is what one tool process cost per message, over its whole life scaled to the
// measured part of the run as CPU time is.
type ProcessCost struct {
	// ContextSwitches counts the voluntary (the thread blocked: a futex, epoll_wait or sleep) and
	// involuntary (the kernel preempted it) switches of all the process's threads, from getrusage.
	ContextSwitches   float64 `json:"context_switches_per_message"`
	VoluntarySwitches float64 `json:"voluntary_context_switches_per_message"`
	// SystemCalls counts the sendmmsg and recvmmsg calls of the gorxe device (its net_send_calls
	// and net_recv_calls counters), EmptyReceives the receives among them that found nothing
	// (net_recv_empty); both are nil when the tool does not report them.
	SystemCalls   *float64 `json:"system_calls_per_message,omitempty"`
	EmptyReceives *float64 `json:"empty_receives_per_message,omitempty"`
}

const (
	unitBytesPerS = "bytes/s"
	unitMsgsPerS  = "messages/s"
	unitNS        = "ns"
	unitBytes     = "bytes"
)

// Comparison relates a gorxe figure to a reference, a UDP ceiling or (VsGo) the Go tool's
// figure: rates as a ratio, times as a difference.
type Comparison struct {
	Ceiling      string   `json:"ceiling"` // which reference, in words
	CeilingValue float64  `json:"ceiling_value"`
	Ratio        *float64 `json:"ratio,omitempty"`   // gorxe / reference
	DiffNS       *float64 `json:"diff_ns,omitempty"` // gorxe - reference
}

// Target is the goal set for a figure and whether this run met it.
type Target struct {
	Text string `json:"text"`
	Met  bool   `json:"met"`
}

// Machine describes where the run happened, since every absolute figure depends on it.
type Machine struct {
	Cores     int    `json:"cores"`
	CPU       string `json:"cpu,omitempty"`
	Kernel    string `json:"kernel"`
	GoVersion string `json:"go_version"`
	LoadAvg   string `json:"load_average,omitempty"` // at the start of the run: 1, 5, 15 minutes
	Date      string `json:"date"`                   // UTC, RFC 3339
}
