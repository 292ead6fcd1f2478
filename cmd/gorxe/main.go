// Command gorxe is the gorxe tool: it runs the narrated demo, dumps RoCEv2
// captures, and is a drop-in peer of the rdma-core and perftest tools
// (rc_pingpong, write_bw, devinfo, ...). Each subcommand lives in its own file.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/perftest"
	"github.com/gorxe/gorxe/internal/devselect"
	"github.com/gorxe/gorxe/netio"
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1 // the command ran and failed (unreadable input, ...)
	exitUsage   = 2 // bad command line
)

// command is one gorxe subcommand.
type command struct {
	name    string
	usage   string // synopsis, for help
	summary string // one line, for help
	run     func(args []string, stdout, stderr io.Writer) int
}

// commands lists the subcommands in the order help shows them.
var commands = []command{
	{"dump", "gorxe dump [-json] [-v] FILE", "print the RoCEv2 packets of a pcap or pcapng capture", runDump},
	{"trace", "gorxe trace FILE [-o OUT.svg|OUT.html]", "draw a capture as a ladder diagram, SVG or clickable HTML", runTrace},
	{"demo", "gorxe demo [-faults SPEC] [-pcap FILE] [-trace OUT]", "two live stacks on loopback doing RDMA, narrated packet by packet", runDemo},
	{"tour", "gorxe tour", "walk through packets of real kernel rxe traffic, field by field", runTour},
	{"rc_pingpong", "gorxe rc_pingpong [OPTIONS] [HOST]", "ibv_rc_pingpong peer: RC SENDs back and forth", runRCPingpong},
	{"uc_pingpong", "gorxe uc_pingpong [OPTIONS] [HOST]", "ibv_uc_pingpong peer: UC SENDs back and forth", runUCPingpong},
	{"ud_pingpong", "gorxe ud_pingpong [OPTIONS] [HOST]", "ibv_ud_pingpong peer: UD SENDs back and forth", runUDPingpong},
	{"srq_pingpong", "gorxe srq_pingpong [OPTIONS] [HOST]", "ibv_srq_pingpong peer: RC QPs sharing one SRQ", runSRQPingpong},
	{"rping", "gorxe rping -s|-c [-vVdP] [-S size] [-C count] [-a addr] [-I addr] [-p port]", "librdmacm rping peer: RDMA-CM connection, READ/WRITE/SEND ping loop", runRping},
	{"ucmatose", "gorxe ucmatose [-s server] [-b addr] [-c conns] [-C count] [-S size] [-p port]", "librdmacm ucmatose peer: RDMA-CM connections, SENDs each way, disconnect", runUcmatose},
	{"mckey", "gorxe mckey -m addr [-s] [-b addr] [-c conns] [-C count] [-S size] [-o]", "librdmacm mckey peer: join an IP multicast group, UD SENDs to it", runMckey},
	{"udaddy", "gorxe udaddy [-s server] [-b addr] [-c conns] [-C count] [-S size] [-t tos]", "librdmacm udaddy peer: UD endpoints resolved with SIDR, SENDs each way", runUdaddy},
	{"rdma_server", "gorxe rdma_server [-p port] [--bind addr]", "librdmacm rdma_server peer: accept one connection, one 16-byte SEND each way", runRdmaServer},
	{"rdma_client", "gorxe rdma_client [-s server] [-p port]", "librdmacm rdma_client peer: connect, one 16-byte SEND each way", runRdmaClient},
	{"devinfo", "gorxe devinfo [-v] [-l] [-d DEV] [-i PORT]", "ibv_devinfo peer: devices, ports and GID tables", runDevinfo},
	{"stats", "gorxe stats [-once] ADDR", "live counters of a gorxe tool running with --metrics ADDR", runStats},
	{"write_bw", "gorxe write_bw [OPTIONS] [HOST]", "ib_write_bw peer: RDMA WRITE bandwidth", perftestCommand(perftest.VerbWrite, perftest.BW)},
	{"read_bw", "gorxe read_bw [OPTIONS] [HOST]", "ib_read_bw peer: RDMA READ bandwidth", perftestCommand(perftest.VerbRead, perftest.BW)},
	{"send_bw", "gorxe send_bw [OPTIONS] [HOST]", "ib_send_bw peer: SEND bandwidth", perftestCommand(perftest.VerbSend, perftest.BW)},
	{"atomic_bw", "gorxe atomic_bw [OPTIONS] [HOST]", "ib_atomic_bw peer: atomic operation rate", perftestCommand(perftest.VerbAtomic, perftest.BW)},
	{"write_lat", "gorxe write_lat [OPTIONS] [HOST]", "ib_write_lat peer: RDMA WRITE latency", perftestCommand(perftest.VerbWrite, perftest.Lat)},
	{"read_lat", "gorxe read_lat [OPTIONS] [HOST]", "ib_read_lat peer: RDMA READ latency", perftestCommand(perftest.VerbRead, perftest.Lat)},
	{"send_lat", "gorxe send_lat [OPTIONS] [HOST]", "ib_send_lat peer: SEND latency", perftestCommand(perftest.VerbSend, perftest.Lat)},
	{"atomic_lat", "gorxe atomic_lat [OPTIONS] [HOST]", "ib_atomic_lat peer: atomic operation latency", perftestCommand(perftest.VerbAtomic, perftest.Lat)},
	{"version", "gorxe version", "print gorxe's module version and the Go version that built it", runVersion},
}

// environment lists the variables gorxe reads, for help.
var environment = []struct{ name, meaning string }{
	{devselect.EnvAddr, "interface or address the tools bind to without --bind or -d"},
	{devselect.EnvPort, "RoCEv2 UDP port instead of 4791; both peers must agree (kernel rxe uses 4791)"},
	{netio.EnvFaults, "impair outgoing datagrams, e.g. loss=0.2 or reorder=0.02,dup=0.01,seed=7"},
	{devselect.EnvPcap, "pcapng file of every datagram a tool sends and receives (as --pcap)"},
}

func main() {
	os.Exit(Run(os.Args[1:], os.Stdout, os.Stderr))
}

// Run runs the gorxe command line args (without the program name) and
// returns the exit status.
func Run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		usage(stdout)
		return exitOK
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "gorxe: unknown command %q\n\n", args[0])
	usage(stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "gorxe is a software RoCEv2 stack; this tool inspects and demonstrates it.\n\nUsage:\n\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-40s %s\n", c.usage, c.summary)
	}
	fmt.Fprintf(w, "  %-40s %s\n", "gorxe help", "show this help")
	fmt.Fprintf(w, "\nRun gorxe COMMAND -h for a command's options.\n\nEnvironment:\n\n")
	for _, e := range environment {
		fmt.Fprintf(w, "  %-14s %s\n", e.name, e.meaning)
	}
}
