package gorxe

import (
	"cmp"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/gorxe/gorxe/clock"
	"github.com/gorxe/gorxe/netio"
)

// DefaultPort is the IANA-assigned RoCEv2 UDP port a Device listens on unless Config.Port says
// otherwise.
const DefaultPort = netio.DefaultPort

// EnvPort is the environment variable that moves a Device off UDP 4791 when Config.Port is
// zero: a testing knob, read by every program that embeds gorxe, as GORXE_FAULTS is.
const EnvPort = "GORXE_PORT"

// PortFromEnv reads EnvPort through getenv (os.Getenv outside tests), as Open does when
// Config.Port is zero: the port it names, or 0 when it is unset (DefaultPort). Programs that
// report the port before opening a device read it here rather than parsing it again.
func PortFromEnv(getenv func(string) string) (uint16, error) {
	v := getenv(EnvPort)
	if v == "" {
		return 0, nil
	}
	p, err := strconv.ParseUint(v, 10, 16)
	if err != nil || p == 0 {
		return 0, fmt.Errorf("%s=%q is not a UDP port number (1-65535)", EnvPort, v)
	}
	return uint16(p), nil
}

// FaultConfig describes the impairments (loss, reordering, duplication, corruption, delay) a
// Device applies to every datagram it sends. Probabilities are in [0, 1], drawn per datagram from a
// generator seeded with Seed, so a configuration replays exactly.
//
//   - Loss, Dup, Corrupt: the probabilities that a datagram is dropped, delivered twice, or has one
//     bit flipped.
//   - Reorder: the probability that a datagram is held back by ReorderDelay (zero: the default),
//     letting later ones overtake it.
//   - Delay, Jitter: added to every datagram's delivery time, Jitter uniformly in [0, Jitter).
//   - Seed: seeds the generator.
//
// Its text form is the one GORXE_FAULTS takes, for example "loss=0.05,reorder=0.02,seed=7".
type FaultConfig = netio.FaultConfig

// NetworkFunc supplies the datagram transport of a Device instead of real UDP sockets: it is called
// once by Open with the device's local addresses and port. Tests pass an in-memory fabric:
//
//	fab := netio.NewFabric(netio.FabricConfig{})
//	cfg.Network = fab.Network()
type NetworkFunc func(addrs []netip.Addr, port uint16) (Network, error)

// Network is the datagram transport a device sends and receives on (netio.Conn): batches of
// Datagrams on a set of local addresses, with Send, Receive, TryReceive, BatchSize,
// ReceiveBufSize, LocalAddrs, Counters and Close. Package netio provides the UDP one and an
// in-memory fabric; see its Conn for the contract of each method.
type Network = netio.Conn

// Datagram is one UDP datagram a Network moves and a TapFunc is shown (netio.Message): Buf holds
// the RoCEv2 packet, Src and Dst are the UDP endpoints, TOS and TTL the IP header's, and
// SegmentSize, on Receive, the size of each datagram of a coalesced run (0 for a single one).
// Datagrams and Datagram split such a run. Payload and Tail, which the device's own UDP sockets
// use to send a payload from registered memory, are never set on a datagram given to a Network
// or shown to a TapFunc; Len is the datagram's length.
type Datagram = netio.Message

// NetworkCounters are a Network's datagram counters (netio.Counters): SentDatagrams, SentBytes,
// ReceivedDatagrams, ReceivedBytes, Drops (indexed by netio.DropReason), the segmentation offload
// counts GSOSends, GSOSegments, GROReads, GROSegments, GSOFallbacks and GROFallbacks, the system
// calls SendCalls, ReceiveCalls and EmptyReceives, and the multicast memberships GroupJoins and
// GroupLeaves. A device reports them as its net_* counters.
type NetworkCounters = netio.Counters

// TapFunc observes one datagram a device sends or receives (Config.Tap); it must not keep the
// Datagram or its Buf after it returns.
type TapFunc = netio.TapFunc

// TapDirection says what happened to a tapped datagram (netio.Direction): where it went (netio.Sent,
// netio.Received, netio.Lost) and, under fault injection, the marks of what the faults did
// (netio.Duplicate, netio.Corrupt, netio.Delayed); String names it.
type TapDirection = netio.Direction

// Config says what a Device binds to and how it runs. Exactly one of Addr and Interface must be
// set; every other field has a working zero value.
type Config struct {
	// Addr binds the device to one local IPv4 or IPv6 address. Its GID table holds the link-local
	// GID rxe derives from the interface's MAC at index 0 and this address after it.
	Addr netip.Addr
	// Interface binds the device to every address of the named network interface, as
	// `rdma link add ... netdev NAME` does: the GID table is that interface's, laid out as rxe's.
	Interface string

	// Name is the device name Device.Name reports; empty means "gorxe_" followed by the interface
	// name or the address.
	Name string
	// Port is the UDP port to listen on; zero means the GORXE_PORT environment variable (EnvPort),
	// or DefaultPort (4791) when that is unset. A device on another port also sends to that port
	// instead of 4791, so it only talks to peers configured alike: other ports are for tests that
	// must not collide with a running rxe.
	Port uint16
	// MTU caps the port's active MTU. Zero derives it as rxe does: the interface MTU minus 80
	// bytes of headers, rounded down to an IB MTU (4096 for loopback and for networks supplied by
	// Network).
	MTU MTU
	// Logger receives the device's events, each record with a "device" attribute naming it and,
	// for a QP, a "qpn" attribute: open and close and fault injection (Info), QP state changes
	// (Info; Warn with the cause when an error moved the QP), completions in error other than
	// flushes (Warn, status named), retransmit timeouts with the retries left (Info), and at
	// Debug what can happen per packet: NAKs sent and received (syndrome named) and RNR timeouts.
	// Those repeating events are logged at most once a second per QP and kind, the next record
	// counting the ones left out ("suppressed"). Nothing is logged per packet at Info, and a
	// logger that is off costs nothing per packet; Counters are the data-path statistics. nil
	// discards everything.
	Logger *slog.Logger
	// Workers is the number of goroutines that run the transport (QPs are spread over them by
	// QPN); zero means GOMAXPROCS, and at least 2.
	Workers int
	// Faults impairs outgoing datagrams. When it is the zero value, the GORXE_FAULTS environment
	// variable is read instead.
	Faults FaultConfig
	// Tap, when set, is shown every datagram the device puts on the network or takes from it, in
	// the order the network gets them; under fault injection a dropped datagram is shown as
	// netio.Lost in its place and the marks of the direction say what else the faults did. It is
	// the hook for packet summaries and capture files: a capture.Writer's Tap method writes a
	// pcapng file of the device's traffic, which the caller closes after Device.Close (package
	// capture, kept out of the root so that a program that captures nothing does not link the
	// pcapng writer). It runs on the device's goroutines and must not keep the message.
	Tap TapFunc

	// Clock is the time source of retransmission, RNR and ACK timers; nil means the real clock.
	// Tests pass a *clock.Fake and step it.
	Clock clock.Clock
	// BusyPoll turns on latency mode, for applications that busy-poll their CQs as perftest's
	// latency tests do. A CQ.Poll that finds the CQ empty reads the network itself and runs what
	// arrived, so a packet becomes a completion with no goroutine wake-up in between; posted work
	// is built and sent on the posting goroutine at once; and the receive goroutine keeps
	// polling the socket for BusyPoll after each datagram before it sleeps. It spends CPU time on
	// waiting to save the microseconds of a wake-up. Zero, the default, never spins.
	BusyPoll time.Duration
	// ReceivePoll is how long the receive goroutine keeps polling the socket after each read
	// before it sleeps, yielding its processor to the application's goroutines between polls,
	// which are 2 µs apart outside latency mode (an empty poll is a system call).
	// Going to sleep in the kernel and being woken costs a thread several microseconds each time
	// the socket runs dry, more than the protocol work of a small message, and a stream whose
	// packets keep arriving within ReceivePoll never pays it: for applications that stream and
	// can spare the CPU time, as perftest's bandwidth tests poll their CQs (64-byte SENDs between
	// two processes on two cores: about 0.8 -> 1.05 M messages/s with 200 µs). An idle device
	// spends ReceivePoll of CPU time once at the end of each burst. Zero, the default, sleeps at
	// once. Latency mode polls for the larger of the two.
	ReceivePoll time.Duration
	// Network replaces the UDP sockets, for tests (see NetworkFunc). A supplied network carries no
	// IP header, so the ICRC of IPv4 packets is verified exactly with the IP ID 0 and DF bit gorxe
	// senders use, rather than with the unknown-ID verifier UDP sockets need.
	Network NetworkFunc
}

// resolved is a validated Config with every default filled in.
type resolved struct {
	Config
	port    uint16
	workers int
	faults  FaultConfig
	clk     clock.Clock
	log     *slog.Logger
}

func (c *Config) resolve() (*resolved, error) {
	r := &resolved{Config: *c}
	switch {
	case c.Addr.IsValid() && c.Interface != "":
		return nil, configErr("Addr and Interface are mutually exclusive")
	case !c.Addr.IsValid() && c.Interface == "":
		return nil, configErr("one of Addr and Interface is required")
	case c.Addr.IsValid() && (c.Addr.IsUnspecified() || c.Addr.IsMulticast()):
		return nil, configErr(fmt.Sprintf("Addr %v is not a unicast address", c.Addr))
	}
	r.port = c.Port
	if r.port == 0 {
		p, err := PortFromEnv(os.Getenv)
		if err != nil {
			return nil, configErr(err.Error())
		}
		r.port = cmp.Or(p, DefaultPort)
	}
	if c.BusyPoll < 0 {
		return nil, configErr(fmt.Sprintf("BusyPoll %v is negative", c.BusyPoll))
	}
	if c.ReceivePoll < 0 {
		return nil, configErr(fmt.Sprintf("ReceivePoll %v is negative", c.ReceivePoll))
	}
	if c.MTU != 0 && !c.MTU.Valid() {
		return nil, configErr(fmt.Sprintf("MTU %d is not an IB MTU enum (1..5)", c.MTU))
	}
	switch {
	case c.Workers < 0:
		return nil, configErr(fmt.Sprintf("Workers %d is negative", c.Workers))
	case c.Workers > 0:
		r.workers = c.Workers
	default:
		r.workers = max(runtime.GOMAXPROCS(0), 2)
	}
	r.faults = c.Faults
	if !r.faults.Enabled() {
		env, err := netio.FaultConfigFromEnv()
		if err != nil {
			return nil, configErr(netio.EnvFaults + ": " + err.Error())
		}
		r.faults = env
	} else if err := r.faults.Validate(); err != nil {
		return nil, configErr("Faults: " + err.Error())
	}
	r.clk = c.Clock
	if r.clk == nil {
		r.clk = clock.Real{}
	}
	r.log = c.Logger
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	return r, nil
}
