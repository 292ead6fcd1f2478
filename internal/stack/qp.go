package stack

import (
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/qp"
)

// QP is the stack's handle on one queue pair: its engine and the worker that owns it. The
// facade keeps it beside the qp package's object and goes through it for the verbs that give the
// engine work (PostSend, Modify, Destroy).
type QP struct {
	qpn uint32
	q   *qp.QP
	eng Engine
	bud budgeted // eng, if it shares the worker's send budget; else nil
	w   *worker

	queued atomic.Bool // on w.pending, waiting for Run
	feeder atomic.Pointer[feeder]
	feedMu sync.Mutex // held from taking the feeder's work to posting it

	// Guarded by the worker's run lock.
	deadline time.Time
	dead     bool
	seen     uint64 // the worker's batch stamp when a packet for this QP was last seen
	version  uint64 // q.AttrVersion when the engine last saw the QP
	starving bool   // on w.starved
	// answered is set when a run of the engine (a post's, a timer's) sent packets, and cleared
	// when a received packet made it send; see keepACKs.
	answered bool

	limit logLimit // rate limits of the QP's log records; guarded by the run lock
}

// Add starts running q's engine on its worker and makes q reachable by QPN from the network.
func (r *Stack) Add(q *qp.QP) (*QP, error) {
	r.SendKept()
	h := &QP{qpn: q.QPN(), q: q, w: r.workerFor(q.QPN())}
	h.eng = r.cfg.NewEngine(&r.env, q)
	h.version = q.AttrVersion()
	h.bud, _ = h.eng.(budgeted)
	if err := h.w.do(func() {
		h.w.own[h] = struct{}{}
		if h.bud != nil {
			h.bud.SetSendBudget(&h.w.budget)
		}
	}); err != nil {
		return nil, err
	}
	// Published last: the receive path ignores the QP until then.
	r.qps.insert(h)
	return h, nil
}

// PostSend posts send work requests to the QP (qp.QP.PostSend) and gets its engine going. Work
// posted to a QP with nothing in flight starts on the caller's goroutine, which saves a goroutine
// hand-off on the way to the wire; while earlier work is in flight, the worker picks new work up
// and sends it with whatever else accumulated. Whether the QP was idle is read under the send
// queue's lock the post holds anyway. In latency mode all posted work starts on the caller's
// goroutine and leaves at once.
func (h *QP) PostSend(wrs []qp.SendWR) error {
	if h.q.Type() == qp.TypeGSI {
		h.w.r.SendKept()
	}
	if h.feeder.Load() != nil {
		// The feeder's work was posted first: it goes first.
		h.feedMu.Lock()
		h.feedLocked()
		idle, err := h.q.PostSend(wrs)
		h.feedMu.Unlock()
		h.notify(idle || h.w.r.latency)
		return err
	}
	idle, err := h.q.PostSend(wrs)
	h.notify(idle || h.w.r.latency)
	return err
}

// Modify changes the QP's attributes on its worker, logs the state change if there is one, then
// runs the engine once, so the transport sees the change before it handles another packet for
// the QP.
func (h *QP) Modify(attr *qp.Attr, mask qp.AttrMask) error {
	h.w.r.SendKept()
	var err error
	if derr := h.w.do(func() {
		from := h.q.State()
		if err = h.q.Modify(attr, mask); err == nil && mask&qp.AttrState != 0 {
			h.w.r.logState(h, from, attr.State, "")
		}
		if err == nil && !h.dead {
			h.w.runEngine(h, h.w.r.clk.Now())
		}
	}); derr != nil {
		return derr
	}
	return err
}

// Destroy destroys the QP on its worker, leaves its multicast groups, stops its traffic and folds
// its counters into the device's retired totals. Once the stack is closed it only destroys the
// QP: nothing runs the engine any more.
func (h *QP) Destroy() error {
	r := h.w.r
	r.SendKept()
	r.mcast.leaveAll(h)
	var err error
	if derr := h.w.do(func() {
		if err = h.q.Destroy(); err == nil {
			h.dead = true
			delete(h.w.own, h)
			if h.bud != nil {
				h.bud.ReleaseSendBudget()
			}
		}
	}); derr != nil {
		err = h.q.Destroy()
	}
	if err == nil {
		r.qps.retire(h, &r.retired)
	}
	return err
}

// Attach joins the QP to the multicast group with address group (at most MaxMcastQPAttach QPs).
func (h *QP) Attach(group netip.Addr) error { return h.w.r.mcast.attach(group, h) }

// Detach leaves the multicast group.
func (h *QP) Detach(group netip.Addr) error { return h.w.r.mcast.detach(group, h) }

// Counters returns the QP's statistics.
func (h *QP) Counters() counter.Snapshot { return h.eng.Counters().Snapshot() }

// notify asks the QP's worker to run its engine soon. With inline set and the worker idle, the
// engine runs at once on the caller's goroutine; otherwise whoever runs the worker picks the QP
// up. It never waits for the worker.
func (h *QP) notify(inline bool) {
	if h.queued.Swap(true) {
		return
	}
	w := h.w
	w.mu.Lock()
	w.pending = append(w.pending, h)
	draining := w.draining
	w.mu.Unlock()
	switch {
	case draining:
	case inline:
		w.help(false)
	default:
		w.wake()
	}
}
