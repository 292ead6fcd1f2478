package main

import (
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/demo"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/devselect"
	"github.com/gorxe/gorxe/netio"
)

// runDemo implements `gorxe demo`: two live gorxe devices on loopback doing RDMA, every step
// verified and shown as the packets it caused.
func runDemo(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	faults := fs.String("faults", "", "impair both devices' traffic, e.g. loss=0.1 or loss=0.05,reorder=0.02,seed=7")
	pcap := fs.String("pcap", "", "also write every packet to this pcap file (gorxe dump and Wireshark read it)")
	a := fs.String("a", "127.0.0.1", "address of device A")
	b := fs.String("b", "127.0.0.2", "address of device B")
	port := fs.Uint("port", 0, "UDP port of both devices (default $GORXE_PORT, else 4791)")
	var o demo.Options
	o.Observe.Flags(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: gorxe demo [-faults SPEC] [-pcap FILE] [-a ADDR] [-b ADDR] [-port N] [-metrics ADDR] [-counters]\n\n"+
			"Runs two gorxe devices in this process on loopback and walks through RC SEND, RDMA WRITE,\n"+
			"RDMA READ, atomics, UC and UD, showing every packet on the wire. GORXE_FAULTS and GORXE_PORT work too.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return exitUsage
	}
	var err error
	if *faults != "" {
		if o.Faults, err = netio.ParseFaultConfig(*faults); err != nil {
			fmt.Fprintf(stderr, "gorxe demo: -faults: %v\n", err)
			return exitUsage
		}
	}
	if o.A, err = netip.ParseAddr(*a); err != nil {
		fmt.Fprintf(stderr, "gorxe demo: -a: %v\n", err)
		return exitUsage
	}
	if o.B, err = netip.ParseAddr(*b); err != nil {
		fmt.Fprintf(stderr, "gorxe demo: -b: %v\n", err)
		return exitUsage
	}
	if *port > 0xFFFF {
		fmt.Fprintf(stderr, "gorxe demo: -port %d is not a UDP port\n", *port)
		return exitUsage
	}
	o.Port = uint16(*port)
	if !flagSet(fs, "port") {
		if o.Port, err = devselect.PortFromEnv(os.Getenv); err != nil {
			fmt.Fprintf(stderr, "gorxe demo: %v\n", err)
			return exitUsage
		}
	}
	if *pcap != "" {
		f, err := os.Create(*pcap)
		if err != nil {
			fmt.Fprintf(stderr, "gorxe demo: %v\n", err)
			return exitFailure
		}
		defer f.Close()
		o.Pcap = f
	}
	ctx, stop := interruptible()
	defer stop()
	if err := demo.Run(ctx, o, stdout); err != nil {
		err = devselect.ExplainInUse(err, o.Port, "give the demo other addresses with -a and -b, or another port with -port")
		fmt.Fprintf(stderr, "gorxe demo: %v\n", err)
		return failure(ctx)
	}
	return exitOK
}

// flagSet reports whether the command line set the flag name.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
