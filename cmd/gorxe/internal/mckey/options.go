package mckey

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"time"

	"github.com/gorxe/gorxe/cm/mad"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
)

// Options are mckey's settings; ParseArgs fills them from a command line.
type Options struct {
	Group       netip.Addr    // -m, or -M: the multicast group
	Unmapped    bool          // -M: Group was given as the multicast GID itself
	BindAddr    netip.Addr    // -b: the local address the group is joined from
	Sender      bool          // -s
	Connections int           // -c: ids (QPs) joining the group
	Count       int           // -C: messages each sender QP sends and each receiver QP awaits
	Size        int           // -S: bytes per message
	PortSpace   mad.PortSpace // -p
	SendOnly    bool          // -o: join as a send-only full member
	NoLoopback  bool          // -l: ask for IBV_QP_CREATE_BLOCK_SELF_MCAST_LB
	Pause       time.Duration // --pause: wait between joining and sending (gorxe only; the C tool's 3 s)
	Timeout     time.Duration // --timeout: give up waiting for messages (gorxe only; 0: never)
	// Common holds --bind, --pcap, --log-level, --metrics and --counters (gorxe only).
	Common tool.Common
}

// Defaults of the C tool.
const (
	defaultConnections = 1
	defaultCount       = 10
	defaultSize        = 100
	// DefaultPause is the C tool's sleep after joining, meant to let a subnet manager program
	// the switches; receivers must have joined by the time the sender sends.
	DefaultPause = 3 * time.Second
)

// Command is gorxe mckey.
var Command = tool.Command{
	Name:     "mckey",
	Synopsis: "gorxe mckey -m addr|-M gid [-s] [-b addr] [-c conns] [-C count] [-S size] [-p space] [-o] [-l]",
	Summary:  "librdmacm mckey peer: join an IP multicast group, UD SENDs to it",
	Usage:    Usage,
	Parse: func(args []string) (tool.Run, error) {
		o, err := ParseArgs(args)
		return func(ctx context.Context, stdout, stderr io.Writer) error { return Run(ctx, o, stdout, stderr) }, err
	},
}

// ParseArgs parses mckey's command line (without the program name).
func ParseArgs(args []string) (Options, error) {
	o := Options{Connections: defaultConnections, Count: defaultCount, Size: defaultSize,
		PortSpace: mad.PortSpaceUDP, Pause: DefaultPause, Common: tool.NewCommon()}
	var mapped, unmapped, space string
	help := false
	opts := []getopt.Option{
		{Short: 'm', Arg: true, Set: getopt.StringOption(&mapped)},
		{Short: 'M', Arg: true, Set: getopt.StringOption(&unmapped)},
		{Short: 's', Set: getopt.FlagOption(&o.Sender)},
		{Short: 'b', Arg: true, Set: getopt.AddrOption(&o.BindAddr)},
		{Short: 'c', Arg: true, Set: getopt.IntOption(&o.Connections, 1, 1<<10)},
		{Short: 'C', Arg: true, Set: getopt.IntOption(&o.Count, 0, 1<<15)},
		{Short: 'S', Arg: true, Set: getopt.IntOption(&o.Size, 0, 1<<31-1)},
		{Short: 'p', Arg: true, Set: getopt.StringOption(&space)},
		{Short: 'o', Set: getopt.FlagOption(&o.SendOnly)},
		{Short: 'l', Set: getopt.FlagOption(&o.NoLoopback)},
		{Short: 'h', Long: "help", Set: getopt.FlagOption(&help)},
		{Long: "pause", Arg: true, Set: getopt.DurationOption(&o.Pause)},
		{Long: "timeout", Arg: true, Set: getopt.DurationOption(&o.Timeout)},
	}
	operands, err := getopt.Parse(args, append(opts, o.Common.Getopt()...))
	switch {
	case err != nil:
		return o, err
	case help:
		return o, tool.ErrHelp
	case len(operands) > 0:
		return o, &getopt.UsageError{Msg: fmt.Sprintf("unexpected operand %q", operands[0])}
	case mapped == "" && unmapped == "":
		return o, &getopt.UsageError{Msg: "a multicast address is required (-m or -M)"}
	case unmapped != "" && !o.BindAddr.IsValid():
		// The C tool's own check and words.
		return o, &getopt.UsageError{Msg: "unmapped multicast address requires binding to source address"}
	}
	if space != "" {
		ps, err := strconv.ParseInt(space, 0, 32)
		if err != nil || (mad.PortSpace(ps) != mad.PortSpaceUDP && mad.PortSpace(ps) != mad.PortSpaceIPoIB) {
			return o, &getopt.UsageError{Msg: fmt.Sprintf("-p %s: port space must be %#x (UDP) or %#x (IPoIB)",
				space, uint16(mad.PortSpaceUDP), uint16(mad.PortSpaceIPoIB))}
		}
		o.PortSpace = mad.PortSpace(ps)
	}
	if o.Size == 0 {
		o.Count = 0 // as the C tool: no message to send
	}
	group := mapped
	if unmapped != "" {
		// -M names the multicast GID itself; an IPv4-mapped GID is its IPv4 group on RoCEv2.
		group, o.Unmapped = unmapped, true
	}
	if o.Group, err = netip.ParseAddr(group); err != nil {
		return o, fmt.Errorf("%s: invalid IP address", group)
	}
	o.Group = o.Group.Unmap()
	if o.Unmapped && !netip.MustParseAddr(group).Is6() {
		return o, &getopt.UsageError{Msg: fmt.Sprintf("-M %s: an unmapped address is a GID, written as IPv6", group)}
	}
	if !o.Group.IsMulticast() {
		return o, fmt.Errorf("%s: not a multicast address", group)
	}
	return o, nil
}

// Usage prints the options, those of the C tool first.
func Usage(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format+"\n", a...) }
	p("Usage: gorxe mckey -m multicast_address [-s] [-b bind_address] [-c connections]")
	p("                   [-C message_count] [-S message_size] [-p port_space] [-o] [-l]")
	p("  -m addr        IP multicast group to join")
	p("  -M gid         multicast GID to join instead of -m (requires -b)")
	p("  -s             send (without -s: receive)")
	p("  -b addr        local address to join from")
	p("  -c n           QPs joining the group (default %d)", defaultConnections)
	p("  -C n           messages each QP sends or awaits (default %d)", defaultCount)
	p("  -S n           bytes per message, at most the active MTU (default %d)", defaultSize)
	p("  -p space       port space: %#x for UDP (default), %#x for IPoIB", uint16(mad.PortSpaceUDP), uint16(mad.PortSpaceIPoIB))
	p("  -o             join as a send-only full member")
	p("  -l             join without multicast loopback (refused, as by kernel rxe)")
	p("  --pause D      wait after joining before sending (default %v, the C tool's)", DefaultPause)
	p("  --timeout D    give up waiting for messages after D (default: never)")
	p("")
	tool.Usage(w, "-b, else the default device")
}
