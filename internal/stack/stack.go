package stack

import (
	"errors"
	"iter"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/gorxe/gorxe/clock"
	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/netio"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
	"github.com/gorxe/gorxe/transport"
)

// Engine is what a worker drives for each QP: the transport's per-QP state machine
// (*transport.Engine; tests put in fakes).
type Engine interface {
	Receive(now time.Time, p *packet.Parsed, from packet.Envelope, out *transport.Output)
	ReceiveMore(now time.Time, p *packet.Parsed, from packet.Envelope, out *transport.Output)
	Run(now time.Time, out *transport.Output)
	Deadline() time.Time
	Counters() *counter.Set
}

// Config is what a stack runs on.
type Config struct {
	Conn    netio.Conn   // owned by the stack from New on: Close closes it
	Workers int          // at least 1
	Clock   clock.Clock  // nil means the real clock
	Log     *slog.Logger // send failures; nil discards
	// Env is the engines' view of the device: memory, source addresses, port and MTU.
	Env transport.Env
	// Strict verifies IPv4 ICRCs exactly with the IP ID 0 and DF gorxe senders use (a network that
	// carries no IP header); otherwise an unknown IP ID is solved for, as from a UDP socket.
	Strict bool
	// NewEngine builds the engine of a QP; nil means transport.New.
	NewEngine func(env *transport.Env, q *qp.QP) Engine
	// BusyPoll turns on latency mode (see Runtime.Poll): posters run their engine at once,
	// waiting for the run lock rather than handing the work over, and after each datagram the
	// receive goroutine keeps polling the network for BusyPoll before it waits in the netpoller.
	// Zero is the default mode, which spends no CPU time waiting.
	BusyPoll time.Duration
	// ReceivePoll is how long the receive goroutine keeps polling the network after each read
	// before it waits in the netpoller, outside latency mode too (see Runtime.spin). Zero waits
	// at once.
	ReceivePoll time.Duration
}

// Stack runs one device's traffic. All methods are safe for concurrent use.
type Stack struct {
	cfg     Config
	conn    netio.Conn
	waiter  netio.ReadableWaiter // what tells when conn has datagrams; nil: receive unordered, and Poll leaves the network alone
	clk     clock.Clock
	log     *slog.Logger
	env     transport.Env
	workers []*worker
	qps     index
	mcast   groups
	done    chan struct{} // closed when Close starts
	rxWG    sync.WaitGroup
	wWG     sync.WaitGroup

	dev     counter.Set // drops before a QP is known, and send errors
	retired counter.Set // the counters of destroyed QPs

	latency bool          // cfg.BusyPoll > 0
	rxPoll  time.Duration // how long the receive goroutine polls: the larger of BusyPoll and ReceivePoll

	pollMu sync.Mutex // one Poll at a time; guards poll
	poll   *rxScratch

	qp1 qp1 // answers CM MADs while the device has no GSI QP
}

// New starts the workers and the receive loop on cfg.Conn.
func New(cfg Config) *Stack {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.NewEngine == nil {
		cfg.NewEngine = func(env *transport.Env, q *qp.QP) Engine { return transport.New(env, q) }
	}
	r := &Stack{cfg: cfg, conn: cfg.Conn, clk: cfg.Clock, log: cfg.Log, env: cfg.Env, done: make(chan struct{}),
		latency: cfg.BusyPoll > 0, rxPoll: max(cfg.BusyPoll, cfg.ReceivePoll)}
	r.waiter, _ = netio.Waiter(cfg.Conn)
	r.qps.init()
	r.mcast.init(cfg.Conn)
	r.workers = make([]*worker, max(cfg.Workers, 1))
	for i := range r.workers {
		r.workers[i] = newWorker(r, i)
	}
	r.wWG.Add(len(r.workers))
	for _, w := range r.workers {
		go w.loop()
	}
	r.rxWG.Add(1)
	go r.receiveLoop()
	return r
}

// Workers returns the number of workers.
func (r *Stack) Workers() int { return len(r.workers) }

// LocalAddrs returns the addresses and port the connection listens on.
func (r *Stack) LocalAddrs() []netip.AddrPort { return r.conn.LocalAddrs() }

// Close sends the ACKs the workers keep back (the messages they acknowledge have completed, and
// their senders wait for them), stops receiving, moves every QP to the error state so that its
// outstanding work requests complete with a flush error, stops the timers and the goroutines, and
// closes the connection.
func (r *Stack) Close() error {
	r.SendKept()
	close(r.done)
	err := r.conn.Close()
	r.rxWG.Wait()
	for _, w := range r.workers {
		close(w.quit)
	}
	r.wWG.Wait()
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}

// Counters returns the device's statistics: its own counters, those of every live QP and those
// destroyed QPs left behind, and the network's drops and segmentation offload.
func (r *Stack) Counters() counter.Snapshot {
	s := r.dev.Snapshot()
	r.qps.sum(&s, &r.retired)
	nc := r.conn.Counters()
	s[counter.NetDropQueueFull] += nc.Drops[netio.DropQueueFull]
	s[counter.NetDropNoRoute] += nc.Drops[netio.DropNoRoute]
	s[counter.NetDropTruncated] += nc.Drops[netio.DropTruncated]
	s[counter.NetDropSendError] += nc.Drops[netio.DropSendError]
	s[counter.NetGSOSends] += nc.GSOSends
	s[counter.NetGSOSegments] += nc.GSOSegments
	s[counter.NetGROReads] += nc.GROReads
	s[counter.NetGROSegments] += nc.GROSegments
	s[counter.NetGSOFallbacks] += nc.GSOFallbacks
	s[counter.NetGROFallbacks] += nc.GROFallbacks
	s[counter.NetSendCalls] += nc.SendCalls
	s[counter.NetRecvCalls] += nc.ReceiveCalls
	s[counter.NetRecvEmpty] += nc.EmptyReceives
	s[counter.NetMcastJoins] += nc.GroupJoins
	s[counter.NetMcastLeaves] += nc.GroupLeaves
	return s
}

// QPCounters yields the QPN and statistics of every live QP, in QPN order. The QPs are listed
// under the index's mutex, then read without it, so a caller may destroy QPs as it goes; a
// QP destroyed meanwhile is still yielded, with its final counters.
func (r *Stack) QPCounters() iter.Seq2[uint32, counter.Snapshot] {
	return func(yield func(uint32, counter.Snapshot) bool) {
		for _, h := range r.qps.list() {
			if !yield(h.qpn, h.Counters()) {
				return
			}
		}
	}
}

// workerFor returns the worker that owns QP number qpn.
func (r *Stack) workerFor(qpn uint32) *worker { return r.workers[int(qpn%uint32(len(r.workers)))] }

// Quiesce returns once every drain under way when it was called has sent what it built, so that
// no packet refers to registered memory the program deregistered before the call (see
// transport.Output.Views): packets are sent in the drain that built them, and only ACKs, which
// carry no payload, are kept from one drain to the next.
func (r *Stack) Quiesce() {
	for _, w := range r.workers {
		w.run.Lock()
		//lint:ignore SA2001 an empty critical section: waiting for the holder is the point
		w.run.Unlock()
	}
}
