package main

import (
	"fmt"
	"regexp"
	"time"
)

// The GIDs a case runs with, on both sides.
const (
	ipv4      = 4  // the IPv4-mapped GID of the test address
	ipv6      = 6  // the global IPv6 GID of the test address
	linkLocal = 66 // the IPv6 link-local GID at index 0, which rxe derives from the MAC
)

// familyName is how the options column names a GID family.
func familyName(family int) string {
	if family == linkLocal {
		return "ipv6ll"
	}
	return fmt.Sprintf("ipv%d", family)
}

// tool is one standard RDMA test program and gorxe's subcommand that mirrors it.
type tool struct {
	c        string // the rdma-core or perftest binary
	gorxe    string // the gorxe subcommand with the same flags
	perftest bool   // perftest (-x GID index) rather than an rdma-core pingpong (-g)
	rc       bool   // runs over RC, so it survives packet loss
	// barrier is set for a tool that ends with a closing barrier, so that the side that receives
	// the last message waits for the other to finish before it destroys its QP; without one, a
	// lost ACK of the last message leaves its sender retransmitting into a destroyed QP (lossFor).
	barrier bool
	// cm is set for an RDMA-CM tool: it finds its peer by IP address through the connection
	// manager (MADs on QP1), takes no GID index or MTU, and its server opens no TCP port.
	cm *cmSyntax
}

// cmSyntax is how an RDMA-CM tool is told its role and addresses.
type cmSyntax struct {
	server, client string // the options before the server's address on each side
	// gorxeListening is the line gorxe's server prints once it listens, given gorxeServerOpts.
	gorxeListening  string
	gorxeServerOpts []string
	// port is the tool's fixed port when it takes none (udaddy): no -p is passed, and the server
	// is awaited on this port.
	port int
	// anyAddr: the server is run without its address option (rdma_server's -s, which defaults
	// to 0.0.0.0) and listens on every address; gorxe's is given its device's address with
	// --bind.
	anyAddr bool
	// clientC and clientGorxe are the client's programs when they are not the server's
	// (rdma_server and rdma_client).
	clientC, clientGorxe string
	// serves is set for a server that serves until it is stopped (cmtime's): once its client has
	// passed it must still be running, and is killed.
	serves bool
	// failed matches what either side prints when one of its connections failed, for a tool that
	// exits 0 regardless (cmtime counts such a connection as done and goes on with the others).
	failed *regexp.Regexp
}

// listenPort is the port the server of a case run on port listens on.
func (s *cmSyntax) listenPort(port int) int {
	if s.port != 0 {
		return s.port
	}
	return port
}

// clientTool is the tool the client runs: t, or its client program.
func (s *cmSyntax) clientTool(t tool) tool {
	if s.clientC != "" {
		t.c, t.gorxe = s.clientC, s.clientGorxe
	}
	return t
}

var (
	rcPingpong  = tool{"ibv_rc_pingpong", "rc_pingpong", false, true, false, nil}
	ucPingpong  = tool{"ibv_uc_pingpong", "uc_pingpong", false, false, false, nil}
	udPingpong  = tool{"ibv_ud_pingpong", "ud_pingpong", false, false, false, nil}
	srqPingpong = tool{"ibv_srq_pingpong", "srq_pingpong", false, true, false, nil}
	writeBW     = tool{"ib_write_bw", "write_bw", true, true, true, nil}
	readBW      = tool{"ib_read_bw", "read_bw", true, true, true, nil}
	sendBW      = tool{"ib_send_bw", "send_bw", true, true, true, nil}
	atomicBW    = tool{"ib_atomic_bw", "atomic_bw", true, true, true, nil}
	writeLat    = tool{"ib_write_lat", "write_lat", true, true, false, nil} // returns right after its report
	readLat     = tool{"ib_read_lat", "read_lat", true, true, true, nil}
	sendLat     = tool{"ib_send_lat", "send_lat", true, true, true, nil}
	atomicLat   = tool{"ib_atomic_lat", "atomic_lat", true, true, true, nil}
	rping       = tool{c: "rping", gorxe: "rping", rc: true, cm: &cmSyntax{
		server: "-s -a", client: "-c -a", gorxeListening: "listening on", gorxeServerOpts: []string{"-d"}}}
	ucmatose = tool{c: "ucmatose", gorxe: "ucmatose", rc: true, cm: &cmSyntax{
		server: "-b", client: "-s", gorxeListening: "cmatose: starting server"}}
	udaddy = tool{c: "udaddy", gorxe: "udaddy", cm: &cmSyntax{
		server: "-b", client: "-s", gorxeListening: "udaddy: starting server", port: 7174}}
	rdmaServer = tool{c: "rdma_server", gorxe: "rdma_server", rc: true, cm: &cmSyntax{
		client: "-s", gorxeListening: "rdma_server: start", anyAddr: true,
		clientC: "rdma_client", clientGorxe: "rdma_client"}}
	// cmtime (C only: there is no Go cmtime) times each step of -c connections made at once: its
	// client resolves, connects and disconnects them all, its server accepts and disconnects
	// them. It reports a failed step ("event: RDMA_CM_EVENT_REJECTED, error: 8", "failing
	// connection request", or perror's "failure ...: reason") and carries on.
	cmtime = tool{c: "cmtime", rc: true, cm: &cmSyntax{
		server: "-b", client: "-s", serves: true, failed: regexp.MustCompile(`(?m)error: |^fail`)}}
)

// runCase is one tool invocation; it runs once per role.
type runCase struct {
	tool    tool
	family  int      // ipv4, ipv6 or linkLocal
	pathMTU int      // -m
	opts    []string // size, iterations and other tool options, the same on both sides
	// gorxeOpts are added on the gorxe side only, for options local to one side.
	gorxeOpts []string
	timeout   time.Duration
	// clientSays is text the client's output must hold, for a tool whose exit status alone does
	// not show the work was done.
	clientSays string
	// loss is what a lossy phase drops for this case; lossOff leaves it to the tool (lossFor).
	loss lossMode
	// onLibrary runs the host side as the distribution's C tool on gorxe's C library instead of
	// gorxe's Go tool.
	onLibrary bool
}

// phase is a network state (netdev MTU, loss) and the cases run in it.
type phase struct {
	label  string
	netMTU int  // bridge, taps and guest NIC
	loss   bool // drop about 2 % of RoCE packets on the bridge
	cases  []runCase
}

func c(t tool, family, mtu int, timeout time.Duration, opts ...string) runCase {
	return runCase{tool: t, family: family, pathMTU: mtu, opts: opts, timeout: timeout}
}

// everyTool is each tool once with sizes that suit it at path MTU mtu.
func everyTool(family, mtu int, iters string) []runCase {
	const t = 90 * time.Second
	udSize := fmt.Sprint(mtu) // a UD message fits one packet
	return []runCase{
		c(rcPingpong, family, mtu, t, "-s", "4096", "-n", iters),
		c(ucPingpong, family, mtu, t, "-s", "4096", "-n", iters),
		c(udPingpong, family, mtu, t, "-s", udSize, "-n", iters),
		c(srqPingpong, family, mtu, t, "-s", "4096", "-n", iters),
		c(writeBW, family, mtu, t, "-s", "65536", "-n", iters),
		c(readBW, family, mtu, t, "-s", "65536", "-n", iters),
		c(sendBW, family, mtu, t, "-s", "65536", "-n", iters),
		c(atomicBW, family, mtu, t, "-n", iters),
		c(writeLat, family, mtu, t, "-s", "2", "-n", iters),
		c(readLat, family, mtu, t, "-s", "2", "-n", iters),
		c(sendLat, family, mtu, t, "-s", "2", "-n", iters),
		c(atomicLat, family, mtu, t, "-n", iters),
	}
}

// sizeSweep covers the message sizes at the edges: one byte, just past a packet, and several MiB.
func sizeSweep(family, mtu int) []runCase {
	const t = 120 * time.Second
	return []runCase{
		c(rcPingpong, family, mtu, t, "-s", "1", "-n", "100"),
		c(rcPingpong, family, mtu, t, "-s", "1048576", "-n", "10"),
		c(udPingpong, family, mtu, t, "-s", "1", "-n", "100"),
		c(writeBW, family, mtu, t, "-s", "1", "-n", "200"),
		c(readBW, family, mtu, t, "-s", "1", "-n", "200"),
		c(sendBW, family, mtu, t, "-s", "1", "-n", "200"),
		c(writeBW, family, mtu, t, "-s", fmt.Sprint(mtu+1), "-n", "200"),
		c(writeBW, family, mtu, t, "-s", "4194304", "-n", "10"),
		c(readBW, family, mtu, t, "-s", "4194304", "-n", "10"),
		c(sendBW, family, mtu, t, "-s", "4194304", "-n", "10"),
	}
}

// linkLocalCases run on GID index 0 on both sides, the link-local GIDs, between which every packet
// travels from one link-local address to another (a socket reports both with the interface's zone).
func linkLocalCases() []runCase {
	const t = 90 * time.Second
	return []runCase{
		c(rcPingpong, linkLocal, 1024, t, "-s", "4096", "-n", "100"),
		c(udPingpong, linkLocal, 1024, t, "-s", "1024", "-n", "100"),
		c(writeBW, linkLocal, 1024, t, "-s", "65536", "-n", "100"),
		c(readBW, linkLocal, 1024, t, "-s", "65536", "-n", "100"),
	}
}

// cmCases are the RDMA-CM tools, which connect through the connection manager on QP1.
func cmCases() []runCase {
	const t = 60 * time.Second
	// rping -v prints each iteration's data; the tenth's says every exchange completed.
	pings := func(family int) runCase {
		rc := c(rping, family, 1024, t, "-C", "10", "-v")
		rc.clientSays = "ping data: rdma-ping-9: "
		return rc
	}
	return []runCase{
		pings(4),
		pings(6),
		c(ucmatose, 4, 1024, t, "-C", "10"),
		c(ucmatose, 6, 1024, t, "-C", "10"),
	}
}

// librdmacmExamples are librdmacm's example programs beyond rping and ucmatose: udaddy, whose UD
// endpoints find each other with SIDR, and the rdma_server / rdma_client pair. The C rdma_server
// runs with IPv4 only: it listens on the first passive address rdma_getaddrinfo gives, 0.0.0.0,
// and the kernel keeps an AF_INET listener to IPv4 (it rejects an IPv6 REQ).
func librdmacmExamples() []runCase {
	const t = 60 * time.Second
	return []runCase{
		c(udaddy, 4, 1024, t, "-C", "10"),
		c(udaddy, 6, 1024, t, "-C", "10"),
		c(rdmaServer, 4, 1024, t),
	}
}

// perftestCM is perftest's -R: the test's QPs connect through RDMA-CM, and so does the exchange,
// on the test's port (-p), so the server opens no TCP port (-z moves only the exchange there). The tools take their usual options
// otherwise; the client names the server by its address of the case's family. Debian 12's
// perftest (4.5-0.17, version 6.06) resolves RDMA-CM addresses as IPv4 only, so these cases are
// IPv4.
var perftestCM = &cmSyntax{gorxeListening: "Waiting for client to connect"}

// withCM is perftest tool t run with -R.
func withCM(t tool) tool {
	t.cm = perftestCM
	return t
}

// perftestCMCases are perftest tools with -R, which connect their QPs through RDMA-CM, or -z.
func perftestCMCases() []runCase {
	const t = 90 * time.Second
	return []runCase{
		c(withCM(writeBW), 4, 1024, t, "-R", "-s", "65536", "-n", "100"),
		c(withCM(readBW), 4, 1024, t, "-R", "-s", "65536", "-n", "100"),
		c(withCM(sendLat), 4, 1024, t, "-R", "-s", "2", "-n", "100"),
		c(withCM(writeBW), 4, 1024, t, "-R", "-q", "3", "-s", "65536", "-n", "50"),
		c(withCM(sendBW), 4, 1024, t, "-R", "-s", "65536", "-n", "100"),
		c(withCM(writeLat), 4, 1024, t, "-R", "-s", "2", "-n", "100"),
		c(withCM(atomicLat), 4, 1024, t, "-R", "-n", "100"),
		// -c UD: the UD QPs find each other with SIDR in RDMA-CM's UDP port space; a message fits
		// one packet.
		c(withCM(sendBW), 4, 1024, t, "-R", "-c", "UD", "-s", "1024", "-n", "100"),
		c(withCM(sendLat), 4, 1024, t, "-R", "-c", "UD", "-s", "2", "-n", "100"),
		// More QPs than RDMA-CM's default backlog (16): perftest's client resolves all 20 at once,
		// without waiting for one SIDR_REP before the next SIDR_REQ, and its server listens with a
		// backlog of -q. Five messages per QP (perftest's least) keep the burst at the 100 UD
		// packets of the case above: with 100 per QP, the VM's virtual NIC once lost 180 of the
		// 2000 (rxe counted 1865 packets received), and perftest's UD server waits for every
		// message it was told of, so it never ended.
		c(withCM(sendBW), 4, 1024, t, "-R", "-c", "UD", "-s", "1024", "-n", "5", "-q", "20"),
		// -z: only the exchange runs over RDMA-CM; the QPs connect from the exchanged keys.
		c(withCM(writeBW), 4, 1024, t, "-z", "-s", "65536", "-n", "100"),
		c(withCM(sendLat), 4, 1024, t, "-z", "-s", "2", "-n", "100"),
	}
}

// perftestCMLossCases are perftest -R tools under loss, where the CM's MADs and the exchange's
// SENDs are lost too; gorxe gets the ACK timeout of the other perftest cases under loss. The
// transfers are smaller than the other loss cases': kernel rxe's QP takes its ACK timeout from
// RDMA-CM here (its REQ asks for 19, 2.1 s, where perftest's -u gives 14, 67 ms, without -R), and
// as the requester of a 12800-packet write_bw it spent over 120 s waiting out lost tails (143
// retry timeouts). ACKs are spared (lossSpareACKs): with -R the run ends with one SEND each way
// on the exchange's connection and no barrier after it, so the side that reads the last message
// disconnects at once, and when the ACK of that SEND is lost its sender's retransmission finds the
// QP gone (RDMA-CM moved it to the error state on the DREQ) and the sender fails. gorxe's side
// waits for the peer's disconnect when it reads last; perftest does not, so a gorxe server failed
// that way once against kernel rxe's client (ib_write_bw rxe->gorxe), and two kernel peers hang.
func perftestCMLossCases() []runCase {
	const t = 120 * time.Second
	cases := []runCase{
		c(withCM(writeBW), 4, 1024, t, "-R", "-s", "16384", "-n", "100"),
		c(withCM(sendLat), 4, 1024, t, "-R", "-s", "2", "-n", "200"),
	}
	for i := range cases {
		cases[i].gorxeOpts = []string{"-u", lossQPTimeout}
		cases[i].loss = lossSpareACKs
	}
	return cases
}

// libraryCases are the distribution's C pingpongs and perftest tools on gorxe's C library against
// kernel rxe at path MTU mtu, IPv4: at both MTUs the RC and UD pingpongs, 64 KiB reads and sends
// and UD sends of one packet; at 1024 the UC and SRQ pingpongs, 64 KiB writes and a one-byte send;
// at 4096 1 MiB writes. The other sizes and GIDs are left to the Go tools' cases: the library runs
// the same engine, so these cases prove the C programs' path through it, not the protocol again.
func libraryCases(mtu int) []runCase {
	// Each takes 2 to 5 s; a hang (a UC message lost for good, which nothing retransmits) should
	// not cost the suite minutes.
	const t = 30 * time.Second
	udSize := fmt.Sprint(mtu) // a UD message fits one packet
	cases := []runCase{
		c(rcPingpong, 4, mtu, t, "-s", "16384", "-n", "100"),
		c(udPingpong, 4, mtu, t, "-s", udSize, "-n", "100"),
		c(readBW, 4, mtu, t, "-s", "65536", "-n", "100"),
		c(sendBW, 4, mtu, t, "-s", "65536", "-n", "100"),
		c(sendBW, 4, mtu, t, "-c", "UD", "-s", udSize, "-n", "100"),
	}
	if mtu == 1024 {
		cases = append(cases,
			c(ucPingpong, 4, mtu, t, "-s", "4096", "-n", "100"),
			c(srqPingpong, 4, mtu, t, "-s", "4096", "-n", "100"),
			c(writeBW, 4, mtu, t, "-s", "65536", "-n", "100"),
			c(sendBW, 4, mtu, t, "-s", "1", "-n", "200"))
	} else {
		cases = append(cases, c(writeBW, 4, mtu, t, "-s", "1048576", "-n", "20"))
	}
	return onLibrary(cases)
}

// onLibrary is cases run on gorxe's C library: the host side is the C tool on it.
func onLibrary(cases []runCase) []runCase {
	out := make([]runCase, len(cases))
	for i, rc := range cases {
		rc.onLibrary = true
		out[i] = rc
	}
	return out
}

// libraryCMCases are the distribution's RDMA-CM tools on gorxe's C library against kernel rxe,
// IPv4: rping, ucmatose, udaddy (UD, SIDR), rdma_server / rdma_client, mckey (a multicast group),
// cmtime (connections made and torn down at once), and perftest with -R over RC (send and write)
// and UD. The Go tools' cases cover IPv6; these prove the C programs' path through the library's
// librdmacm.
func libraryCMCases() []runCase {
	const t = 30 * time.Second
	pings := c(rping, 4, 1024, t, "-C", "10", "-v")
	pings.clientSays = "ping data: rdma-ping-9: "
	times := c(cmtime, 4, 1024, t, "-c", "20")
	times.clientSays = fmt.Sprintf("%-13s: ", "destroy") // its table's last row
	return onLibrary([]runCase{
		pings,
		c(ucmatose, 4, 1024, t, "-C", "10"),
		c(udaddy, 4, 1024, t, "-C", "10"),
		c(rdmaServer, 4, 1024, t),
		c(mckey, 4, 1024, t, "-C", "10"),
		times,
		c(withCM(sendBW), 4, 1024, t, "-R", "-s", "65536", "-n", "100"),
		c(withCM(sendBW), 4, 1024, t, "-R", "-c", "UD", "-s", "1024", "-n", "100"),
		c(withCM(writeBW), 4, 1024, t, "-R", "-s", "65536", "-n", "100"),
	})
}

// rcOnly keeps the cases whose tool runs over RC.
func rcOnly(cases []runCase) []runCase {
	var out []runCase
	for _, rc := range cases {
		if rc.tool.rc {
			out = append(out, rc)
		}
	}
	return out
}

// gorxeMatrix is the gorxe <-> kernel rxe matrix: every tool with IPv4 and IPv6 GIDs at path MTU
// 1024 and 4096, a size sweep, a few tools on the link-local GIDs, the RC tools under loss, and
// the C tools on gorxe's C library at both path MTUs (its RDMA-CM tools at 1024, rping under loss
// too).
func gorxeMatrix() []phase {
	return []phase{
		{label: "mtu1500", netMTU: 1500, cases: concat(
			everyTool(4, 1024, "100"),
			sizeSweep(4, 1024),
			[]runCase{
				c(rcPingpong, 6, 1024, 90*time.Second, "-s", "4096", "-n", "100"),
				c(writeBW, 6, 1024, 90*time.Second, "-s", "65536", "-n", "100"),
			},
			linkLocalCases(),
			cmCases(),
			librdmacmExamples(),
			mcCases(),
			perftestCMCases(),
			libraryCases(1024),
			libraryCMCases())},
		{label: "mtu9000", netMTU: 9000, cases: concat(
			everyTool(6, 4096, "100"),
			[]runCase{
				c(rcPingpong, 4, 4096, 90*time.Second, "-s", "4096", "-n", "100"),
				c(udPingpong, 4, 4096, 90*time.Second, "-s", "4096", "-n", "100"),
				c(writeBW, 4, 4096, 120*time.Second, "-s", "4194304", "-n", "10"),
				c(readBW, 6, 4096, 120*time.Second, "-s", "4194304", "-n", "10"),
				c(sendBW, 6, 4096, 120*time.Second, "-s", "4194304", "-n", "10"),
				c(rcPingpong, linkLocal, 4096, 90*time.Second, "-s", "16384", "-n", "100"),
			},
			libraryCases(4096))},
		{label: "mtu1500 loss", netMTU: 1500, loss: true, cases: concat(lossCases(), lossCMCases(), perftestCMLossCases(),
			onLibrary(lossCMCases()))},
	}
}

// lossQPTimeout is gorxe's perftest ACK timeout (-u) under loss: 4.096 us * 2^18, about 1.07 s.
// perftest's default, 14 (67 ms), is shorter than the stalls of kernel rxe's responder under
// emulation: captures show it silent for 0.3 to 1.7 s while it works through a go-back-N backlog,
// between two kernel rxe peers too. Kernel rxe as requester treats retry_cnt 7 as "retry forever"
// and rides such a stall out; gorxe follows IBTA (7 retries), so with 67 ms it gives up after
// about half a second with IBV_WC_RETRY_EXC_ERR. The option is local to each side's requester, so
// only gorxe gets it: kernel rxe keeps its default, with which it recovers fastest. The pingpongs
// have no such option (their timeout is fixed at 14) and need none: one message in flight never
// builds a backlog.
const lossQPTimeout = "18"

// lossCases are the RC tools under about 2 % loss.
func lossCases() []runCase {
	cases := rcOnly(concat(
		everyTool(4, 1024, "200"),
		[]runCase{c(writeBW, 4, 1024, 120*time.Second, "-s", "1048576", "-n", "20")}))
	for i := range cases {
		if cases[i].tool.perftest {
			cases[i].gorxeOpts = []string{"-u", lossQPTimeout}
		}
	}
	return cases
}

// lossCMCases are the RDMA-CM tools under about 2 % loss, and a quarter of the CM MADs lost
// besides (DREQs spared, see lossSpareACKsCM): a lost REQ, REP, RTU or DREP must be recovered by
// the connection managers' retransmissions on both sides (each retransmission waits the CM response timeout, about 4.3 s, or the
// kernel's 6.4 s, hence the longer timeout).
func lossCMCases() []runCase {
	rc := c(rping, 4, 1024, 120*time.Second, "-C", "10", "-v")
	rc.clientSays = "ping data: rdma-ping-9: "
	rc.loss = lossSpareACKsCM
	return []runCase{rc}
}

// baselineMatrix is the kernel rxe <-> kernel rxe control run between two VMs: it proves the
// harness, so that a gorxe failure is gorxe's.
func baselineMatrix(full bool) []phase {
	if !full {
		return []phase{{label: "mtu1500", netMTU: 1500, cases: []runCase{
			c(rcPingpong, 4, 1024, 90*time.Second, "-s", "4096", "-n", "100"),
			c(writeBW, 4, 1024, 90*time.Second, "-s", "65536", "-n", "100"),
		}}}
	}
	lossy := lossCases()
	for i := range lossy {
		lossy[i].gorxeOpts = nil // no gorxe side here
	}
	return []phase{
		{label: "mtu1500", netMTU: 1500, cases: everyTool(4, 1024, "100")},
		{label: "mtu1500 loss", netMTU: 1500, loss: true, cases: lossy},
	}
}

func concat(lists ...[]runCase) []runCase {
	var out []runCase
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}
