package perftest

import (
	"fmt"
	"time"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/oob"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
)

// perftest's defaults and limits (perftest_parameters.h).
const (
	DefaultPort     = 18515
	defSizeBW       = 65536
	defSizeLat      = 2
	defSizeAtomic   = 8
	defIters        = 1000
	defItersWriteBW = 5000
	defTxBW         = 128
	defTxLat        = 1
	defRxSend       = 512
	defRxRDMA       = 1
	defCQMod        = 100
	defQPTimeout    = 14
	defInlineWrite  = 220 // latency tests only: bandwidth tests send nothing inline by default
	defInlineSendRC = 236
	defInlineSendUD = 188
	defQKey         = 0x11111111
	minRNRTimer     = 12
	retryCount      = 7
	rnrRetry        = 7
	hopLimit        = 0xff
	defTOS          = -1 // no -T

	minIters        = 5
	maxIters        = 1 << 32
	maxTx           = 15000
	maxRx           = 16384
	ucMaxRx         = 16000
	maxQPs          = 16384
	maxCQMod        = 1024
	maxInline       = 1024
	maxInlineUD     = 1024
	maxSize         = 8388608 // the largest size of -a, 2^23
	maxMsgSize      = 1 << 31
	cqModSizeLimit  = 8192 // above it a bandwidth test signals every work request
	noPeakIterLimit = 20000
	defCacheLine    = 64
)

// Params are the settings of one run, after parsing and perftest's consistency rules.
type Params struct {
	Test Test

	// Server is the host to connect to; empty makes this side the server.
	Server string
	Port   int // TCP port of the out-of-band exchange
	Device string
	IBPort int
	// GIDIndex selects the local GID; -1 picks the best one as perftest does (IPv4-mapped first).
	GIDIndex int
	IPv6     bool
	MTU      int // path MTU in bytes; 0 uses the port's active MTU

	Size     int
	sizeSet  bool
	Iters    int
	All      bool // -a: every power of two from 2 to 2^23
	Duration int  // seconds; 0 runs Iters iterations
	Margin   int  // seconds cut off at each end of a duration run

	Conn       ConnType
	AtomicType AtomicType
	Inline     int // max inline data; -1 picks perftest's default
	NumQPs     int
	TxDepth    int
	RxDepth    int
	CQMod      int
	cqModSet   bool
	PostList   int
	OutReads   int // 0: the device maximum
	QPTimeout  int
	SL         int
	TClass     int
	Events     bool
	NoPeak     bool

	// RDMACM (-R, perftest's work_rdma_cm) connects the test's QPs through RDMA-CM instead of
	// moving them to RTR and RTS from the exchanged addresses; it implies CommRDMACM.
	RDMACM bool
	// CommRDMACM (-z, perftest's use_rdma_cm) runs the out-of-band exchange over an RDMA-CM
	// connection of its own (SEND and RECV on one RC QP) instead of TCP.
	CommRDMACM bool
	// TOS (-T) is the traffic class of the RDMA-CM connections; -1 leaves it 0.
	TOS int
	// RetryCount (--retry_count) is the transport retry count the RDMA-CM connections ask for.
	RetryCount int

	ReportGbits bool
	Histogram   bool
	Unsorted    bool
	// Output is "" for full output, or bandwidth, message_rate or latency for the single number.
	Output           string
	DontXchgVersions bool
	HugePages        bool
	LatencyGap       int // microseconds between latency iterations
	LimitBW          float64
	LimitMsgRate     float64
	// OutJSON (--out_json) also writes each result, with the test's parameters, to OutJSONFile
	// (--out_json_file, default perftest_out.json in the working directory) as perftest does.
	OutJSON     bool
	OutJSONFile string
	// Timeout bounds each out-of-band step before the measurement and each wait for progress
	// during it (gorxe only; 0: none). After the measurement starts, a side waits for the other's
	// as long as it takes.
	Timeout time.Duration
	// SourceIP (--source_ip) is the device's address when neither --bind nor -d names one.
	SourceIP string
	// WaitDestroy (--wait_destroy) is how long a side waits after the test before it destroys
	// its resources.
	WaitDestroy time.Duration
	// Common holds --bind, --pcap, --log-level, --metrics and --counters (gorxe only).
	Common tool.Common

	// notices are printed before the test's header, as perftest prints its adjustments.
	notices []string
}

// IsServer reports whether this side waits for the other.
func (p *Params) IsServer() bool { return p.Server == "" }

// defaults returns perftest's defaults for test t.
func defaults(t Test) Params {
	p := Params{
		Test: t, Port: DefaultPort, IBPort: 1, GIDIndex: -1,
		Size: defSizeBW, Iters: defIters, Margin: -1,
		Inline: -1, NumQPs: 1, TxDepth: defTxBW, RxDepth: defRxRDMA, CQMod: defCQMod, PostList: 1,
		QPTimeout: defQPTimeout, TOS: defTOS, RetryCount: retryCount, Timeout: oob.DefaultTimeout, OutJSONFile: defJSONFile, Common: tool.NewCommon(),
	}
	if t.Kind == Lat {
		p.Size, p.TxDepth = defSizeLat, defTxLat
	}
	if t.Verb == VerbSend {
		p.RxDepth = defRxSend
	}
	if t.Kind == BW && t.Verb == VerbWrite {
		p.Iters = defItersWriteBW
	}
	if t.Verb == VerbAtomic {
		p.Size, p.AtomicType = defSizeAtomic, FetchAndAdd
	}
	return p
}

// usageError is a command-line error; it prints as one line and matches getopt.ErrUsage.
func usageError(format string, args ...any) error {
	return &getopt.UsageError{Msg: fmt.Sprintf(format, args...)}
}

// finish applies perftest's consistency rules (force_dependencies) after parsing.
func (p *Params) finish(durationSet bool) error {
	t := p.Test
	if p.SourceIP != "" && p.Common.Bind == "" && p.Device == "" {
		p.Common.Bind = p.SourceIP
	}
	if p.IBPort != 1 {
		return usageError("-i %d: a gorxe device has only port 1", p.IBPort)
	}
	if err := p.finishRDMACM(); err != nil {
		return err
	}
	if t.Verb == VerbAtomic && p.sizeSet && p.Size != defSizeAtomic {
		return usageError("Message size cannot be changed for Atomic tests")
	}
	if t.Verb == VerbAtomic && p.All {
		return usageError("-a is not available in Atomic tests (their size is 8)")
	}
	if durationSet {
		if p.All {
			return usageError("Duration mode currently doesn't support running on all sizes.")
		}
		if p.Events {
			return usageError("Duration mode doesn't work with events.")
		}
		if p.Margin < 0 {
			p.Margin = p.Duration / 4
		}
		if p.Duration <= 2*p.Margin {
			return usageError("please check that DURATION > 2*MARGIN")
		}
		p.NoPeak = true
	} else {
		p.Duration = 0
		p.Margin = 0
		p.TxDepth = min(p.TxDepth, p.Iters)
		if t.Verb == VerbSend {
			p.RxDepth = min(p.RxDepth, p.Iters)
		}
		if (p.Conn == UD || p.Conn == UC) && p.RxDepth == defRxSend {
			p.RxDepth = min(p.Iters, ucMaxRx)
		}
	}
	if t.Kind == BW && p.Size > cqModSizeLimit && p.Conn != UD && !p.All && !p.cqModSet {
		p.CQMod = 1
	}
	if t.Kind == BW && p.PostList > 1 {
		if !p.cqModSet {
			p.CQMod = p.PostList
			p.notices = append(p.notices, "Post List requested - CQ moderation will be the size of the post list")
		} else if p.PostList%p.CQMod != 0 {
			return usageError("Post list size must be a multiple of CQ moderation")
		}
		if p.PostList > p.TxDepth {
			return usageError("--post_list %d is larger than the TX depth %d", p.PostList, p.TxDepth)
		}
	}
	p.CQMod = min(p.CQMod, p.TxDepth)
	if t.Verb == VerbRead || t.Verb == VerbAtomic {
		p.Inline = 0
	}
	if p.Conn == UD && p.Inline > maxInlineUD {
		p.notices = append(p.notices, fmt.Sprintf("Setting inline size to %d (Max inline size in UD)", maxInlineUD))
		p.Inline = maxInlineUD
	}
	if p.Inline < 0 {
		p.Inline = 0
		if t.Kind == Lat {
			switch {
			case t.Verb == VerbWrite:
				p.Inline = defInlineWrite
			case t.Verb == VerbSend && p.Conn == UD:
				p.Inline = defInlineSendUD
			case t.Verb == VerbSend:
				p.Inline = defInlineSendRC
			}
		}
	}
	if t.Verb == VerbSend && t.Kind == BW && p.IsServer() {
		p.NoPeak = true
	}
	if t.Verb == VerbSend && p.RxDepth%2 == 1 && !p.All {
		p.RxDepth++
	}
	if t.Kind == BW && p.Duration == 0 && p.Iters > noPeakIterLimit {
		p.NoPeak = true
	}
	switch p.Output {
	case "":
	case "bandwidth", "message_rate":
		if t.Kind != BW {
			return usageError(" Output verbosity level for LAT can be: latency")
		}
	case "latency":
		if t.Kind != Lat {
			return usageError(" Output verbosity level for BW can be: bandwidth, message_rate")
		}
	default:
		return usageError("--output=%s: choose bandwidth, message_rate or latency", p.Output)
	}
	if p.LatencyGap > 0 && t.Kind != Lat {
		return usageError(" Latency gap feature is only for latency tests")
	}
	return nil
}

// sizes returns the message sizes the run measures, in order: with -a every power of two from 2
// to 2^23, or to the MTU for UD (to which the size was lowered).
func (p *Params) sizes() []int {
	if !p.All {
		return []int{p.Size}
	}
	top := maxSize
	if p.Conn == UD {
		top = p.Size
	}
	var s []int
	for n := 2; n <= top; n *= 2 {
		s = append(s, n)
	}
	return s
}

// bufSize is the largest message the run sends.
func (p *Params) bufSize() int {
	if p.All && p.Conn != UD {
		return maxSize
	}
	return p.Size
}
