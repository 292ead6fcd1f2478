package rdmacm

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/clock"
	"github.com/gorxe/gorxe/cm"
)

// agent is a device's connection manager: QP1, the protocol state machine and the goroutines that
// drive them. Every handle on it (an Agent from Open, a Listener, a Conn) holds a reference; the
// agent stops when the last one is released.
type agent struct {
	dev  *gorxe.Device
	clk  clock.Clock // the device's: protocol timers run on the device's time
	q    *qp1
	mgr  *cm.Manager
	cmds chan command
	rx   chan rxMAD
	// commEst carries the passive connections whose QP received its first packet (comm_est.go).
	commEst chan cm.ConnID
	// tick wakes the run loop when the manager's deadline is due (the clock's timers run their
	// callbacks on goroutines of their own).
	tick chan struct{}
	// ctx ends when the agent stops serving: its last reference was released (cause ErrClosed)
	// or its device was closed (cause gorxe.ErrDeviceClosed). Every wait in the package watches
	// it, and reports the cause (see stopped).
	ctx    context.Context
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup
	// gone is closed once the goroutines have ended and QP1 is destroyed, so that a new agent
	// can create the device's GSI QP again.
	gone chan struct{}
	refs int // guarded by registry.Mutex

	// Owned by the run loop.
	conns     map[cm.ConnID]*Conn
	listeners map[uint64]*Listener
	routes    map[[16]byte]int // peer GID → GID index our MADs to it leave from
	ud        udState          // UD listeners and service ID resolutions (ud_agent.go)
	lost      uint64           // MADs that could not be posted on QP1
}

// command is one call into the manager, run on the agent's goroutine.
type command struct {
	f    func(now time.Time, out *cm.Output) error
	done chan error
}

// start creates QP1 and the manager and starts the goroutines.
func start(dev *gorxe.Device, cfg Config) (*agent, error) {
	q, err := openQP1(dev)
	if err != nil {
		return nil, err
	}
	mc := cfg.CM
	if mc.CAGUID == 0 {
		if attr, err := dev.Query(); err == nil {
			mc.CAGUID = attr.NodeGUID
		}
	}
	if mc.TIDHigh == 0 {
		mc.TIDHigh = rand.Uint32()
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	a := &agent{
		dev: dev, clk: dev.Clock(), q: q, mgr: cm.New(mc),
		cmds: make(chan command), rx: make(chan rxMAD, qp1RecvSlots), commEst: make(chan cm.ConnID, commEstSlots),
		tick: make(chan struct{}, 1), ctx: ctx, cancel: cancel, gone: make(chan struct{}),
		conns: make(map[cm.ConnID]*Conn), listeners: make(map[uint64]*Listener), routes: make(map[[16]byte]int),
	}
	a.wg.Add(2)
	go func() {
		defer a.wg.Done()
		a.q.receive(ctx, func(m rxMAD) bool {
			select {
			case a.rx <- m:
				return true
			case <-ctx.Done():
				return false
			}
		})
	}()
	go a.run()
	return a, nil
}

// Stats are an agent's counters.
type Stats struct {
	CM cm.Counters
	// SendDropped counts MADs that could not be posted on QP1 (every send buffer in flight, no
	// route to the peer); like MADs lost on the network, retransmissions recover them.
	SendDropped uint64
}

// Stats returns the agent's counters.
func (h *Agent) Stats(ctx context.Context) (Stats, error) { return h.a.stats(ctx) }

func (a *agent) stats(ctx context.Context) (Stats, error) {
	var s Stats
	err := a.do(ctx, func(time.Time, *cm.Output) error {
		s = Stats{CM: a.mgr.Counters(), SendDropped: a.lost}
		return nil
	})
	return s, err
}

// do runs f on the agent's goroutine, with the manager to itself, and sends and dispatches what
// it produced before returning f's error. Once the agent has taken the command, do waits for it
// whatever ctx says, so a command is never half-applied behind its caller's back.
func (a *agent) do(ctx context.Context, f func(now time.Time, out *cm.Output) error) error {
	c := command{f: f, done: make(chan error, 1)}
	select {
	case a.cmds <- c:
	case <-ctx.Done():
		return ctx.Err()
	case <-a.ctx.Done():
		return a.stopped()
	}
	select {
	case err := <-c.done:
		return err
	case <-a.ctx.Done():
		// The run loop answers a command it took before it stops: the answer says whether the
		// command ran, which the caller's cleanup depends on.
		select {
		case err := <-c.done:
			return err
		default:
			return a.stopped()
		}
	}
}

// stopped returns why the agent stopped serving: ErrClosed, or gorxe.ErrDeviceClosed.
func (a *agent) stopped() error { return context.Cause(a.ctx) }

// run is the agent's goroutine: the only caller of the manager. Its one timer runs on the
// device's clock.
func (a *agent) run() {
	defer a.wg.Done()
	timer := a.clk.AfterFunc(time.Hour, func() {
		select {
		case a.tick <- struct{}{}:
		default:
		}
	})
	timer.Stop()
	defer timer.Stop()
	var out cm.Output
	for {
		var done chan error
		var err error
		select {
		case <-a.ctx.Done():
			return
		case <-a.dev.Done():
			a.deviceClosed()
			return
		case c := <-a.cmds:
			// A closed device wins over a command that came at the same time: nothing asked for
			// after Close returned may seem to succeed. The command is not run.
			select {
			case <-a.dev.Done():
				c.done <- gorxe.ErrDeviceClosed
				a.deviceClosed()
				return
			default:
			}
			err = c.f(a.clk.Now(), &out)
			done = c.done
		case m := <-a.rx:
			if i := gidIndex(a.dev, gidAddr(m.local)); i >= 0 {
				a.routes[m.from.GID] = i
			}
			a.mgr.Receive(a.clk.Now(), m.from, m.mad, &out)
		case id := <-a.commEst:
			a.onCommEst(a.clk.Now(), id, &out)
		case <-a.tick:
			// A tick left over from a timer stopped after it fired finds nothing due.
			a.mgr.Tick(a.clk.Now(), &out)
		}
		a.flush(&out)
		if done != nil {
			done <- err
		}
		timer.Stop()
		if d := a.mgr.Deadline(); !d.IsZero() {
			timer.Reset(d.Sub(a.clk.Now()))
		}
	}
}

// deviceClosed stops the agent when its device closes: nothing will be sent or received again, so
// every wait in the package ends with gorxe.ErrDeviceClosed, and each connection is over at once
// (disconnected, its reference released, Done closed) instead of retransmitting into a closed
// device until its timers run out. Handles still open keep the agent registered until they are
// closed, as after any stop.
func (a *agent) deviceClosed() {
	a.cancel(gorxe.ErrDeviceClosed)
	for _, c := range a.conns {
		if c.established {
			c.disconnect(Event{Type: EventDisconnected, Err: gorxe.ErrDeviceClosed})
		}
		a.forget(c)
	}
}

// flush sends the manager's datagrams and handles its events; handling an event may call the
// manager again, so it loops until nothing is left.
func (a *agent) flush(out *cm.Output) {
	for len(out.Datagrams) > 0 || len(out.Events) > 0 {
		cur := *out
		*out = cm.Output{}
		for _, d := range cur.Datagrams {
			if !a.q.send(a.route(d.To.GID), d.To, d.MAD) {
				a.lost++
			}
		}
		for _, e := range cur.Events {
			a.handle(a.clk.Now(), e, out)
		}
	}
}

// route returns the GID index MADs to peer leave from: the address the peer last reached us at,
// else the device's address for that family.
func (a *agent) route(peer [16]byte) int {
	if i, ok := a.routes[peer]; ok {
		return i
	}
	if src, ok := sourceFor(a.dev, gidAddr(peer)); ok {
		return gidIndex(a.dev, src)
	}
	return -1
}
