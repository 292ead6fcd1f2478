package pingpong

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/oob"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
	"github.com/gorxe/gorxe/internal/devselect"
)

// Kind selects which of the four tools runs.
type Kind int

// The pingpong tools.
const (
	RC  Kind = iota // ibv_rc_pingpong: one RC QP
	UC              // ibv_uc_pingpong: one UC QP
	UD              // ibv_ud_pingpong: one UD QP and an address handle
	SRQ             // ibv_srq_pingpong: several RC QPs sharing one SRQ
)

// Name is the subcommand name: the C tool's name without "ibv_".
func (k Kind) Name() string {
	names := [...]string{"rc_pingpong", "uc_pingpong", "ud_pingpong", "srq_pingpong"}
	if k < 0 || int(k) >= len(names) {
		return fmt.Sprintf("Kind(%d)", int(k))
	}
	return names[k]
}

// Defaults shared with the C tools.
const (
	DefaultTCPPort = 18515
	maxQP          = 256 // srq_pingpong's MAX_QP
)

// Options are a pingpong tool's settings; ParseArgs fills them from a command line.
type Options struct {
	Kind     Kind
	Server   string // host to connect to; empty: be the server
	Port     int    // -p: TCP port of the exchange
	IBDev    string // -d: interface, address or gorxe device name
	IBPort   int    // -i: port of the device (gorxe devices have port 1 only)
	Size     int    // -s: message size in bytes
	MTU      int    // -m: path MTU in bytes (RC, UC, SRQ)
	RxDepth  int    // -r: receives kept posted
	Iters    int    // -n: exchanges
	SL       int    // -l: service level
	Events   bool   // -e: sleep on completion events instead of polling
	GIDIndex int    // -g: local GID index; -1 sends the zero GID (no GRH)
	Check    bool   // -c: validate the received buffer
	NumQP    int    // -q: QPs (SRQ)
	// Timeout bounds each out-of-band step and each wait for a completion (gorxe only; 0: none).
	Timeout time.Duration
	// Common holds --bind, --pcap, --log-level, --metrics and --counters (gorxe only).
	Common tool.Common

	odp, prefetch, timestamps, deviceMemory bool // rc_pingpong's -o/-O, -P, -t, -j
}

// Command returns the gorxe command of the tool kind.
func Command(k Kind) tool.Command {
	return tool.Command{
		Name:     k.Name(),
		Synopsis: "gorxe " + k.Name() + " [OPTIONS] [HOST]",
		Summary:  [...]string{"ibv_rc_pingpong peer: RC SENDs back and forth", "ibv_uc_pingpong peer: UC SENDs back and forth", "ibv_ud_pingpong peer: UD SENDs back and forth", "ibv_srq_pingpong peer: RC QPs sharing one SRQ"}[k],
		Usage:    func(w io.Writer) { Usage(w, k) },
		Parse: func(args []string) (tool.Run, error) {
			o, err := ParseArgs(k, args)
			return func(ctx context.Context, stdout, stderr io.Writer) error { return Run(ctx, o, stdout, stderr) }, err
		},
	}
}

// ParseArgs parses the command line of the tool kind (without the program name).
func ParseArgs(kind Kind, args []string) (Options, error) {
	o := Options{
		Kind: kind, Port: DefaultTCPPort, IBPort: 1, Size: 4096, MTU: 1024, RxDepth: 500,
		Iters: 1000, GIDIndex: -1, NumQP: 16, Timeout: oob.DefaultTimeout, Common: tool.NewCommon(),
	}
	if kind == UD {
		o.Size = 1024 // the C tool's default since its MTU check; 2048 fails at active MTU 1024
	}
	help := false
	opts := []getopt.Option{
		{Short: 'p', Long: "port", Arg: true, Set: getopt.IntOption(&o.Port, 0, 65535)},
		{Short: 'd', Long: "ib-dev", Arg: true, Set: getopt.StringOption(&o.IBDev)},
		{Short: 'i', Long: "ib-port", Arg: true, Set: getopt.IntOption(&o.IBPort, 1, 255)},
		{Short: 's', Long: "size", Arg: true, Set: getopt.IntOption(&o.Size, 0, 1<<31-1)},
		{Short: 'r', Long: "rx-depth", Arg: true, Set: getopt.IntOption(&o.RxDepth, 1, gorxe.MaxCQE-maxQP)},
		{Short: 'n', Long: "iters", Arg: true, Set: getopt.IntOption(&o.Iters, 1, 1<<31-1)},
		{Short: 'l', Long: "sl", Arg: true, Set: getopt.IntOption(&o.SL, 0, 255)},
		{Short: 'e', Long: "events", Set: getopt.FlagOption(&o.Events)},
		{Short: 'g', Long: "gid-idx", Arg: true, Set: getopt.IntOption(&o.GIDIndex, -1, 1<<31-1)},
		{Short: 'c', Long: "chk", Set: getopt.FlagOption(&o.Check)},
		{Short: 'h', Long: "help", Set: getopt.FlagOption(&help)},
		{Long: "timeout", Arg: true, Set: getopt.DurationOption(&o.Timeout)},
	}
	opts = append(opts, o.Common.Getopt()...)
	if kind != UD {
		opts = append(opts, getopt.Option{Short: 'm', Long: "mtu", Arg: true, Set: mtuOption(&o.MTU)})
	}
	switch kind {
	case RC:
		opts = append(opts,
			getopt.Option{Short: 'o', Long: "odp", Set: getopt.FlagOption(&o.odp)},
			getopt.Option{Short: 'O', Long: "iodp", Set: getopt.FlagOption(&o.odp)},
			getopt.Option{Short: 'P', Long: "prefetch", Set: getopt.FlagOption(&o.prefetch)},
			getopt.Option{Short: 't', Long: "ts", Set: getopt.FlagOption(&o.timestamps)},
			getopt.Option{Short: 'j', Long: "dm", Set: getopt.FlagOption(&o.deviceMemory)},
			// The ibv_wr_* posting API puts the same SENDs on the wire.
			getopt.Option{Short: 'N', Long: "new_send", Set: getopt.FlagOption(new(bool))},
		)
	case SRQ:
		opts = append(opts,
			getopt.Option{Short: 'q', Long: "num-qp", Arg: true, Set: getopt.IntOption(&o.NumQP, 1, 1<<31-1)},
			getopt.Option{Short: 'o', Long: "odp", Set: getopt.FlagOption(&o.odp)},
		)
	}
	operands, err := getopt.Parse(args, opts)
	switch {
	case err != nil:
		return o, err
	case help:
		return o, tool.ErrHelp
	case len(operands) > 1:
		return o, &getopt.UsageError{Msg: fmt.Sprintf("more than one server name: %q", operands)}
	case len(operands) == 1:
		o.Server = operands[0]
	}
	return o, o.check()
}

// check applies the C tools' checks between option parsing and opening the device.
func (o *Options) check() error {
	switch {
	case o.odp && o.deviceMemory:
		return errors.New("DM memory region can't be on demand")
	case !o.odp && o.prefetch:
		return errors.New("prefetch is valid only with on-demand memory region")
	case o.Kind == SRQ && o.Size < 1:
		return &getopt.UsageError{Msg: "-s must be at least 1"}
	case o.Kind == SRQ && o.NumQP > o.RxDepth:
		return fmt.Errorf("rx_depth %d is too small for %d QPs -- must have at least one receive per QP.", o.RxDepth, o.NumQP)
	case o.Kind == SRQ && o.NumQP >= maxQP:
		return fmt.Errorf("num_qp %d must be less than %d", o.NumQP, maxQP-1)
	}
	return nil
}

func mtuOption(p *int) func(string) error {
	return func(s string) error {
		v, err := getopt.ParseInt(s)
		if err != nil {
			return err
		}
		switch v {
		case 256, 512, 1024, 2048, 4096:
			*p = int(v)
			return nil
		}
		return errors.New("not an IB MTU (256, 512, 1024, 2048 or 4096)")
	}
}

// Usage writes the tool's help.
func Usage(w io.Writer, k Kind) {
	name := "gorxe " + k.Name()
	p := func(f string, a ...any) { fmt.Fprintf(w, f+"\n", a...) }
	p("Usage:")
	p("  %s            start a server and wait for connection", name)
	p("  %s <host>     connect to server at <host>", name)
	p("")
	p("Options:")
	p("  -p, --port=<port>      TCP port of the address exchange (default %d)", DefaultTCPPort)
	p("  -d, --ib-dev=<dev>     device: interface name, local address or gorxe_<name> (default: see below)")
	p("  -i, --ib-port=<port>   port of the device (default 1, the only one)")
	switch k {
	case UD:
		p("  -s, --size=<size>      message size, at most the active MTU (default 1024)")
	default:
		p("  -s, --size=<size>      message size (default 4096)")
		p("  -m, --mtu=<size>       path MTU (default 1024)")
	}
	if k == SRQ {
		p("  -q, --num-qp=<num>     number of QPs sharing the SRQ (default 16)")
	}
	p("  -r, --rx-depth=<dep>   receives kept posted (default 500)")
	if k == SRQ {
		p("  -n, --iters=<iters>    number of exchanges, over all QPs (default 1000)")
	} else {
		p("  -n, --iters=<iters>    number of exchanges (default 1000)")
	}
	p("  -l, --sl=<sl>          service level (default 0)")
	p("  -e, --events           wait for completion events instead of polling")
	p("  -g, --gid-idx=<index>  local GID index; required on RoCE (1: the IPv4 address, as on rxe)")
	p("  -c, --chk              check the received buffer")
	switch k {
	case RC:
		p("  -o, --odp / -O, --iodp register on-demand (implicit) paging memory")
		p("  -P, --prefetch         prefetch the on-demand region")
		p("  -t, --ts               completion timestamps (not supported by gorxe)")
		p("  -j, --dm               device memory (not supported by gorxe)")
		p("  -N, --new_send         post with the ibv_wr_* API (same traffic)")
	case SRQ:
		p("  -o, --odp              register on-demand paging memory")
	}
	p("      --timeout=<dur>    give up on a silent peer after this long, per step (default %v; 0: never)", oob.DefaultTimeout)
	p("")
	tool.Usage(w, "-d, else $"+devselect.EnvAddr+" (interface or address), else the first interface that is up with an IPv4 address, else 127.0.0.1")
}
