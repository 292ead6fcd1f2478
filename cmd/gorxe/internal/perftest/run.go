package perftest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"time"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm/rdmacm"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/oob"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
	"github.com/gorxe/gorxe/internal/devselect"
)

// responderBusyPoll is how long the device of a READ or atomic latency test's server keeps
// polling the network after a datagram. That server only serves: no CQ poll of its own reads the
// network, as the other latency tests' do, so with tool.LatencyBusyPoll its receive goroutine slept
// between requests and every request paid the wake-up of a sleeping thread, which on a virtual
// machine now and then takes hundreds of µs (read_lat -s 64, two cores: typical 34-44 µs, p99
// 83-404 µs; polling as a bandwidth test does: 16-18 µs and 52-68 µs).
const responderBusyPoll = 200 * time.Microsecond

// bandwidthReceivePoll is how long a bandwidth test's device keeps polling the network after a
// read before its receive goroutine sleeps (Config.ReceivePoll): perftest's bandwidth tests
// busy-poll their CQs, and a stream's next packets are rarely further apart than this.
const bandwidthReceivePoll = 200 * time.Microsecond

// selection picks the device of a test, and how its receive goroutine polls.
func selection(p *Params) devselect.Selection {
	sel := devselect.Selection{Device: p.Device}
	switch {
	case p.Events:
		// -e sleeps on CQ events; so does the device.
	case p.Test.Kind == Lat && p.IsServer() && (p.Test.Verb == VerbRead || p.Test.Verb == VerbAtomic):
		sel.BusyPoll = responderBusyPoll
	case p.Test.Kind == Lat:
		// perftest's latency tests busy-poll; so does the device under them.
		sel.BusyPoll = tool.LatencyBusyPoll
	default:
		sel.ReceivePoll = bandwidthReceivePoll
	}
	return sel
}

// Run runs one side of a test with the parameters of ParseArgs. It prints perftest's output on
// stdout and its notices on stderr, and returns why it failed, if it did, in one line.
func Run(ctx context.Context, p *Params, stdout, stderr io.Writer) (err error) {
	warn := func(s string) { fmt.Fprintln(stderr, s) }
	full := p.Output == ""
	for _, n := range p.notices {
		if full {
			io.WriteString(stdout, resultLine)
		}
		fmt.Fprintln(stdout, n)
	}
	sel := selection(p)
	open := p.Common.Open
	if p.CommRDMACM {
		open = p.Common.OpenCM // --counters and --metrics show the connection manager too
	}
	sess, err := open(sel, stdout, stderr)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, sess.Close()) }()
	dev := sess.Dev
	mtu, err := portMTU(p, dev, warn)
	if err != nil {
		return err
	}

	var (
		conn  exchange
		cmEnd *cmEndpoint
	)
	if p.CommRDMACM {
		cs, end, err := openCMExchange(ctx, p, dev, full, stdout)
		if err != nil {
			return err
		}
		conn, cmEnd = cs, end
		if end.l != nil {
			defer end.l.Close()
		}
		if end.ud != nil {
			defer end.ud.Close()
		}
	} else if conn, err = openTCPExchange(ctx, p, full, stdout); err != nil {
		return err
	}

	var rdmaCM *cmEndpoint
	if p.RDMACM {
		rdmaCM = cmEnd
	}
	pl := newRDMA(p, dev, rdmaCM, warn)
	f := &flow{p: p, x: newSession(conn, !p.IsServer(), p.CommRDMACM), s: conn, pl: pl, out: stdout, warn: warn, full: full,
		cycleBuffer: os.Getpagesize()}
	err = converse(ctx, f, conn, mtu)
	if err == nil && p.Test.Verb == VerbWrite && p.Test.Kind == Lat {
		time.Sleep(lingerAfter)
	}
	if err == nil && p.WaitDestroy > 0 {
		select {
		case <-time.After(p.WaitDestroy):
		case <-ctx.Done():
		}
	}
	if cerr := pl.close(); err == nil {
		err = cerr
	}
	if err == nil && f.belowLimit != "" {
		err = errors.New("Error: " + f.belowLimit)
	}
	return err
}

// exchange is the out-of-band connection of a run: TCP, or RDMA-CM with -z and -R.
type exchange interface {
	Stream
	io.Closer
}

// openTCPExchange opens perftest's TCP connection: a server listens on every address and accepts
// one client, a client connects.
func openTCPExchange(ctx context.Context, p *Params, full bool, stdout io.Writer) (*oob.Conn, error) {
	if !p.IsServer() {
		return oob.Dial(ctx, p.Server, p.Port, p.Timeout)
	}
	l, err := oob.Listen(ctx, p.Port)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	// The banner comes once the port is open, so whoever waits for it can start the client.
	if full {
		io.WriteString(stdout, waitingBanner)
	}
	return l.Accept(ctx, 0, p.Timeout)
}

// openCMExchange opens the exchange's RDMA-CM connection to the test's port. A server listens on
// every address of the device and accepts one connection; with -R the listener stays open for
// the test's connections, which perftest makes to the same port.
func openCMExchange(ctx context.Context, p *Params, dev *gorxe.Device, full bool, stdout io.Writer) (*cmStream, *cmEndpoint, error) {
	s, o, err := newCMStream(ctx, dev, p)
	if err != nil {
		return nil, nil, err
	}
	end := &cmEndpoint{}
	if !p.IsServer() {
		if end.server, err = cmServerAddr(ctx, p); err != nil {
			return nil, nil, errors.Join(err, s.Close())
		}
		dctx, cancel := context.WithCancel(ctx)
		if p.Timeout > 0 {
			dctx, cancel = context.WithTimeout(ctx, p.Timeout)
		}
		s.conn, err = rdmacm.Dial(dctx, dev, end.server, o)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			err = fmt.Errorf("%w after %v", tool.ErrTimedOut, p.Timeout)
		}
		if err != nil {
			return nil, nil, errors.Join(&oob.Error{Op: "Unable to perform rdma_client function", Peer: end.server.String(), Err: err}, s.Close())
		}
		return s, end, nil
	}
	all := netip.IPv4Unspecified()
	if p.IPv6 {
		all = netip.IPv6Unspecified()
	}
	// perftest's client connects all its QPs at once, not one after another, and its server
	// listens with a backlog of -q (rdma_listen(id, num_of_qps)), in both port spaces.
	lo := rdmacm.Options{Backlog: p.NumQPs}
	l, err := rdmacm.Listen(ctx, dev, netip.AddrPortFrom(all, uint16(p.Port)), &lo)
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("rdma_listen on port %d: %w", p.Port, err), s.Close())
	}
	if p.RDMACM && p.Conn == UD {
		// UD QPs come through the UDP port space: their listener is there before the first
		// barrier too.
		if end.ud, err = rdmacm.ListenUD(ctx, dev, netip.AddrPortFrom(all, uint16(p.Port)), &rdmacm.UDOptions{Options: lo}); err != nil {
			l.Close()
			return nil, nil, errors.Join(fmt.Errorf("rdma_listen on UDP port %d: %w", p.Port, err), s.Close())
		}
	}
	if full {
		io.WriteString(stdout, waitingBanner)
	}
	s.conn, err = l.AcceptWith(ctx, o)
	if err == nil && p.RDMACM {
		end.l = l
		return s, end, nil
	}
	l.Close()
	if end.ud != nil {
		end.ud.Close()
	}
	if err != nil {
		return nil, nil, errors.Join(&oob.Error{Op: "Unable to perform rdma_server function", Err: err}, s.Close())
	}
	return s, end, nil
}

// converse runs the flow and hangs up the out-of-band connection as soon as it ends, before
// anything else is torn down: a peer waiting for this side's next message (with no time limit
// while a measurement runs) learns at once that none will come, whether this side finished,
// failed or was interrupted.
func converse(ctx context.Context, f *flow, conn io.Closer, mtu gorxe.MTU) error {
	err := f.run(ctx, mtu)
	_ = conn.Close() // the conversation is over; a peer that hung up first is no failure
	return err
}

// Usage prints the options of test t.
func Usage(w io.Writer, t Test) {
	bw, lat := t.Kind == BW, t.Kind == Lat
	send, rdAt := t.Verb == VerbSend, t.Verb == VerbRead || t.Verb == VerbAtomic
	var lines []string
	add := func(ok bool, s string) {
		if ok {
			lines = append(lines, s)
		}
	}
	size := defSizeBW
	if lat {
		size = defSizeLat
	}
	iters := defIters
	if bw && t.Verb == VerbWrite {
		iters = defItersWriteBW
	}
	add(true, "Usage:")
	add(true, fmt.Sprintf("  gorxe %s            start a server and wait for connection", t.Name()))
	add(true, fmt.Sprintf("  gorxe %s <host>     connect to server at <host>", t.Name()))
	add(true, "")
	add(true, "Options:")
	add(t.Verb != VerbAtomic, "  -a, --all  Run sizes from 2 till 2^23")
	add(t.Verb == VerbAtomic, "  -A, --atomic_type=<type>  type of atomic operation from {CMP_AND_SWAP,FETCH_AND_ADD} (default FETCH_AND_ADD)")
	add(send, "  -c, --connection=<RC/UC/UD>  Connection type RC/UC/UD (default RC)")
	add(t.Verb == VerbWrite, "  -c, --connection=<RC/UC>  Connection type RC/UC (default RC)")
	add(rdAt, "  -c, --connection=<RC>  Connection type RC (default RC)")
	add(true, "  -d, --ib-dev=<dev>  Use the interface, address or gorxe device <dev> (default $GORXE_ADDR, else the first interface)")
	add(true, "  -D, --duration  Run test for a customized period of seconds.")
	add(true, "  -e, --events  Sleep on CQ events (default poll)")
	add(true, "  -f, --margin  measure results within margins. (default=duration/4)")
	add(true, "  -F, --CPU-freq  Do not show a warning even if cpufreq_ondemand module is loaded (accepted, no effect)")
	add(true, "  -h, --help  Show this help screen.")
	add(lat, "  -H, --report-histogrm  Print out all results (default print summary only)")
	add(true, "  -i, --ib-port=<port>  Use port <port> of IB device (default 1)")
	add(!rdAt, "  -I, --inline_size=<size>  Max size of message to be sent in inline")
	add(bw, "  -l, --post_list=<list size> Post list of WQEs of <list size> size (instead of single post)")
	add(true, "  -m, --mtu=<mtu>  MTU size : 256 - 4096 (default port mtu)")
	add(true, fmt.Sprintf("  -n, --iters=<iters>  Number of exchanges (at least %d, default %d)", minIters, iters))
	add(bw, "  -N, --noPeak Cancel peak-bw calculation (default with peak up to iters=20000)")
	add(rdAt, "  -o, --outs=<num>  num of outstanding read/atom(default max of device)")
	add(true, fmt.Sprintf("  -p, --port=<port>  Listen on/connect to port <port> (default %d)", DefaultPort))
	add(bw, "  -q, --qp=<num of qp's>  Num of qp's(default 1)")
	add(bw, "  -Q, --cq-mod  Generate Cqe only after <--cq-mod> completion")
	add(true, "  -R, --rdma_cm  Connect QPs with rdma_cm and run test on those QPs (the exchange runs over rdma_cm too)")
	add(send, fmt.Sprintf("  -r, --rx-depth=<dep>  Rx queue size (default %d).", defRxSend))
	add(t.Verb != VerbAtomic, fmt.Sprintf("  -s, --size=<size>  Size of message to exchange (default %d)", size))
	add(true, "  -S, --sl=<sl>  SL (default 0)")
	add(bw, fmt.Sprintf("  -t, --tx-depth=<dep>  Size of tx queue (default %d)", defTxBW))
	add(true, "  -T, --tos=<tos value>  Set <tos_value> to RDMA-CM QPs. available only with -R flag. values 0-255 (default off)")
	add(true, fmt.Sprintf("  -u, --qp-timeout=<timeout>  QP timeout, timeout value is 4 usec * 2 ^(timeout), default %d", defQPTimeout))
	add(lat, "  -U, --report-unsorted  (implies -H) print out unsorted results (default sorted)")
	add(true, "  -V, --version  Display version number")
	add(bw, "  -w, --limit_bw=<value>  Set verifier limit for bandwidth")
	add(true, "  -x, --gid-index=<index>  Test uses GID with GID index (default: the first IPv4 GID)")
	add(bw, "  -y, --limit_msgrate=<value>  Set verifier limit for Msg Rate")
	add(true, "  -z, --comm_rdma_cm  Communicate with rdma_cm module to exchange data - use regular QPs")
	add(true, "")
	add(true, "      --dont_xchg_versions  Do not exchange versions and MTU with other side ")
	add(true, "      --ipv6  Use IPv6 GID. Default is IPv4")
	add(lat, "      --latency_gap=<delay_time>  delay time between each post send")
	add(true, "      --out_json  Save the report in a json file")
	add(true, fmt.Sprintf("      --out_json_file=<file>  Name of the report json file. (Default: %s in the working directory)", defJSONFile))
	add(true, "      --output=<units> Set verbosity output level: bandwidth , message_rate, latency ")
	add(true, "      --retry_count=<value>  Set retry count value in rdma_cm mode (default 7)")
	add(bw, "      --report_gbits  Report Max/Average BW of test in Gbit/sec (instead of MB/sec)")
	add(true, "      --tclass=<value>  Set the Traffic Class in GRH (if GRH is in use)")
	add(true, fmt.Sprintf("      --timeout=<dur>  give up on a silent peer after this long, per step (default %v; 0: never); an RC bandwidth client waits out its QP's retries too", oob.DefaultTimeout))
	add(true, "      --use_hugepages  Use Hugepages instead of contig, memalign allocations.")
	add(true, "      --source_ip=<ip>  Source IP: the device's address when neither --bind nor -d gives one")
	add(true, "      --wait_destroy=<seconds>  Wait before destroying the resources at the end of the test")
	add(true, "")
	add(true, "Accepted and changing nothing on gorxe: -F, -X/--vector, --pkey_index, --recv_post_list,")
	add(true, "--dlid (a RoCE path has no LID), --use_old_post_send, --disable_pcie_relaxed.")
	add(true, "")
	add(true, "Not supported by gorxe (refused with a line saying why): -b, -O, -g, -M, -C, -L, -W, --run_infinitely,")
	add(true, "XRC/DC/SRD connections, raw Ethernet options, rate limiting, GPU memory, crypto offload.")
	add(true, "")
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	tool.Usage(w, "-d, else $GORXE_ADDR, else the first interface that is up with an IPv4 address")
}
