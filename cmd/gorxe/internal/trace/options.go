package trace

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
)

// Format is the kind of file Run writes.
type Format uint8

// Output formats.
const (
	FormatSVG  Format = iota // a standalone SVG image
	FormatHTML               // a self-contained page: the SVG, packet explanations, expandable bands
)

// Options controls what is drawn and how.
type Options struct {
	Input    string // the capture file
	Output   string // "" writes SVG to standard output
	Format   Format
	QPN      uint32 // with HasQPN, draw only packets from or to this QP number
	HasQPN   bool
	Port     uint16 // with HasPort, draw only packets from or to this UDP port
	HasPort  bool
	Gap      time.Duration // silences longer than this become a labelled break
	Collapse int           // runs of at least this many MIDDLE packets become one band; 0: never

	// FirstFrame and LastFrame, when not 0, draw only the frames between them (inclusive):
	// a page of a long capture.
	FirstFrame, LastFrame int
}

// Defaults: a pause between tool runs (seconds) is a break, one inside an exchange (tens of
// µs to a few ms on kernel rxe) is not; a burst of four MIDDLE packets or more is a band.
const (
	DefaultGap      = 20 * time.Millisecond
	DefaultCollapse = 4
)

const usageText = `Usage: gorxe trace FILE [-o OUT.svg|OUT.html] [-qp N] [-port N] [-frames A-B] [-gap D] [-collapse N]

Draws the RoCEv2 packets of FILE, a pcap or pcapng capture, as a ladder diagram: one vertical
line per queue pair (IP address and QPN), one arrow per packet labelled with its opcode, PSN,
length and ACK syndrome. ACKs, NAKs and RNR NAKs have their own colours; retransmissions,
duplicates and lost PSNs are marked, and so are the packets fault injection dropped (gorxe's
captures keep them, marked); long silences are cut short and labelled; runs of MIDDLE
packets collapse into one band, and -frames draws one page of a long capture. The HTML page
shows a packet's full decoding when its arrow is clicked and expands a band when it is clicked.
Without -o the SVG goes to standard output.

`

// Usage writes the command's help to w.
func Usage(w io.Writer) {
	fs := newFlagSet(&Options{}, w)
	fmt.Fprint(w, usageText)
	fs.PrintDefaults()
}

// flagQPN parses a QP number in decimal or 0x hex, within 24 bits.
type flagQPN struct{ o *Options }

func (f flagQPN) String() string { return "" }
func (f flagQPN) Set(s string) error {
	v, err := strconv.ParseUint(s, 0, 24)
	if err != nil {
		return errors.New("not a 24-bit QP number")
	}
	f.o.QPN, f.o.HasQPN = uint32(v), true
	return nil
}

// flagFrames parses a frame range, "100-400", "100-" or "-400".
type flagFrames struct{ o *Options }

func (f flagFrames) String() string { return "" }
func (f flagFrames) Set(s string) error {
	from, to, ok := strings.Cut(s, "-")
	if !ok {
		return errors.New("want FIRST-LAST, FIRST- or -LAST")
	}
	var err error
	parse := func(v string, into *int) {
		if v == "" || err != nil {
			return
		}
		n, perr := strconv.Atoi(v)
		if perr != nil || n < 1 {
			err = errors.New("frame numbers start at 1")
		}
		*into = n
	}
	parse(from, &f.o.FirstFrame)
	parse(to, &f.o.LastFrame)
	if err == nil && f.o.LastFrame != 0 && f.o.LastFrame < f.o.FirstFrame {
		err = errors.New("the range ends before it starts")
	}
	return err
}

// flagPort parses a UDP port.
type flagPort struct{ o *Options }

func (f flagPort) String() string { return "" }
func (f flagPort) Set(s string) error {
	v, err := strconv.ParseUint(s, 0, 16)
	if err != nil {
		return errors.New("not a UDP port")
	}
	f.o.Port, f.o.HasPort = uint16(v), true
	return nil
}

func newFlagSet(o *Options, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("trace", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&o.Output, "o", "", "write to `FILE`, SVG or HTML by its extension (default: SVG to standard output)")
	fs.Var(flagQPN{o}, "qp", "draw only packets from or to QP number `N` (decimal or 0x hex)")
	fs.Var(flagPort{o}, "port", "draw only packets from or to UDP port `N`")
	fs.Var(flagFrames{o}, "frames", "draw only frames `A-B` of the capture (A-: to the end, -B: from the start)")
	fs.DurationVar(&o.Gap, "gap", DefaultGap, "cut silences longer than `D` short, with a label")
	fs.IntVar(&o.Collapse, "collapse", DefaultCollapse, "collapse runs of at least `N` MIDDLE packets into a band (0: never)")
	return fs
}

// ParseArgs parses the command line after "trace". Flags may come before or after FILE. It
// returns tool.ErrHelp for -h, an error wrapping ErrUsage for a bad command line (the flag package
// has already said why on errOut), or ErrOutputFormat.
func ParseArgs(args []string, errOut io.Writer) (Options, error) {
	var o Options
	fs := newFlagSet(&o, errOut)
	fs.Usage = func() {}
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return o, tool.ErrHelp
			}
			return o, fmt.Errorf("%w: %v", ErrUsage, err)
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	switch {
	case len(files) != 1:
		return o, fmt.Errorf("%w: want one capture file, got %d", ErrUsage, len(files))
	case o.Gap <= 0:
		return o, fmt.Errorf("%w: -gap must be positive", ErrUsage)
	case o.Collapse < 0:
		return o, fmt.Errorf("%w: -collapse must not be negative", ErrUsage)
	}
	o.Input = files[0]
	switch name := strings.ToLower(o.Output); {
	case name == "" || strings.HasSuffix(name, ".svg"):
		o.Format = FormatSVG
	case strings.HasSuffix(name, ".html") || strings.HasSuffix(name, ".htm"):
		o.Format = FormatHTML
	default:
		return o, ErrOutputFormat
	}
	return o, nil
}
