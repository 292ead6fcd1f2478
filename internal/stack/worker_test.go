package stack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gorxe/gorxe/clock"
	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/netio"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
	"github.com/gorxe/gorxe/transport"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeEngine records what the worker hands it and produces what the test tells it to.
type fakeEngine struct {
	mu       sync.Mutex
	q        *qp.QP
	received []packet.BTHFields
	from     []packet.Envelope
	more     []bool // whether each packet came through ReceiveMore
	runs     int
	deadline time.Time
	// onRun, if set, is called by Run and may queue packets; onReceive likewise by Receive and
	// ReceiveMore.
	onRun, onReceive func(now time.Time, out *transport.Output)
	ran              chan struct{}
	ctr              counter.Set
}

func (e *fakeEngine) Counters() *counter.Set { return &e.ctr }

func (e *fakeEngine) Receive(now time.Time, p *packet.Parsed, from packet.Envelope, out *transport.Output) {
	e.record(now, p, from, false, out)
}

func (e *fakeEngine) ReceiveMore(now time.Time, p *packet.Parsed, from packet.Envelope, out *transport.Output) {
	e.record(now, p, from, true, out)
}

func (e *fakeEngine) record(now time.Time, p *packet.Parsed, from packet.Envelope, more bool, out *transport.Output) {
	e.mu.Lock()
	e.received = append(e.received, p.BTH().Fields())
	e.from = append(e.from, from)
	e.more = append(e.more, more)
	f := e.onReceive
	e.mu.Unlock()
	if f != nil {
		f(now, out)
	}
	e.ran <- struct{}{}
}

func (e *fakeEngine) Run(now time.Time, out *transport.Output) {
	e.mu.Lock()
	e.runs++
	f := e.onRun
	e.mu.Unlock()
	if f != nil {
		f(now, out)
	}
	select {
	case e.ran <- struct{}{}:
	default:
	}
}

func (e *fakeEngine) Deadline() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.deadline
}

// testRig is a stack on an in-memory fabric with a fake clock, whose QPs get fake engines.
type testRig struct {
	fab  *netio.Fabric
	clk  *clock.Fake
	rt   *Stack
	made chan *fakeEngine
	qps  *qp.Table
	pd   *mr.PD
	cq   *cq.CQ
	// closed is set by a test that closes the stack itself, so that the cleanup does not again.
	closed bool
}

// newRig starts a stack at addr (listening on extra addresses too) and closes it when the test
// ends.
func newRig(t testing.TB, addr string, extra ...netip.Addr) *testRig {
	return newRigOn(t, func(e *netio.Endpoint) netio.Conn { return e }, addr, extra...)
}

// newRigOn is newRig with the stack's connection made by wrap from the fabric endpoint.
func newRigOn(t testing.TB, wrap func(*netio.Endpoint) netio.Conn, addr string, extra ...netip.Addr) *testRig {
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	fab := netio.NewFabric(netio.FabricConfig{Clock: clk})
	t.Cleanup(fab.Close)
	ep, err := fab.NewEndpoint(packet.UDPPort, append([]netip.Addr{mustAddr(addr)}, extra...)...)
	require.NoError(t, err)
	x := &testRig{fab: fab, clk: clk, made: make(chan *fakeEngine, 16), qps: qp.NewTable(qp.Config{Limits: qp.DefaultLimits()})}
	x.rt = New(Config{Conn: wrap(ep), Workers: 2, Clock: clk, Log: slog.New(slog.DiscardHandler), Strict: true,
		NewEngine: func(_ *transport.Env, q *qp.QP) Engine {
			e := &fakeEngine{q: q, ran: make(chan struct{}, 64)}
			x.made <- e
			return e
		}})
	t.Cleanup(func() {
		if !x.closed {
			assert.NoError(t, x.rt.Close())
		}
	})
	mem := mr.NewTable()
	x.pd, err = mem.AllocPD()
	require.NoError(t, err)
	x.cq, err = cq.New(64, cq.Options{})
	require.NoError(t, err)
	return x
}

// create makes a QP of type typ in RESET and adds it to the stack.
func (x *testRig) create(t testing.TB, typ qp.Type) (*QP, *fakeEngine) {
	q, err := x.qps.CreateQP(x.pd, &qp.InitAttr{Type: typ, SendCQ: x.cq, RecvCQ: x.cq, Cap: qp.Caps{MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}})
	require.NoError(t, err)
	h, err := x.rt.Add(q)
	require.NoError(t, err)
	return h, <-x.made
}

// rawPeer is a bare fabric endpoint that sends hand-built RoCEv2 packets.
type rawPeer struct {
	ep   *netio.Endpoint
	addr netip.AddrPort
}

func newRawPeer(t *testing.T, f *testRig, addr string) *rawPeer {
	a := netip.MustParseAddr(addr)
	ep, err := f.fab.NewEndpoint(0, a)
	require.NoError(t, err)
	t.Cleanup(func() { ep.Close() })
	return &rawPeer{ep: ep, addr: netip.AddrPortFrom(a, 0xC123)}
}

// send builds a packet with h and payload, fixes its ICRC for the path (unless corrupt), and sends
// it to dst.
func (r *rawPeer) send(t *testing.T, dst netip.Addr, h *packet.Headers, payload []byte, corrupt bool) {
	t.Helper()
	pkt, err := packet.AppendPacket(nil, h, payload)
	require.NoError(t, err)
	to := netip.AddrPortFrom(dst, packet.UDPPort)
	env := packet.Envelope{Src: r.addr, Dst: to, IPFlags: packet.IPv4DontFragment}
	require.NoError(t, env.PutICRC(pkt))
	if corrupt {
		pkt[len(pkt)-1] ^= 0x40
	}
	if _, err := r.ep.Send([]netio.Message{{Buf: pkt, Src: r.addr, Dst: to}}); err != nil {
		require.Fail(t, fmt.Sprint(err))
	}
}

func waitRan(t *testing.T, e *fakeEngine) {
	t.Helper()
	select {
	case <-e.ran:
	case <-time.After(10 * time.Second):
		require.Fail(t, "the engine was not called")
	}
}

func sendOnly(qpn uint32, pkey uint16) *packet.Headers {
	return &packet.Headers{BTH: packet.BTHFields{Opcode: packet.RCSendOnly, PKey: pkey, DestQP: qpn, PSN: 5}}
}

// signed returns a SEND ONLY packet for qpn with 100 bytes of payload and its ICRC, corrupted if
// bad.
func signed(t testing.TB, qpn uint32, src, dst netip.AddrPort, bad bool) []byte {
	pkt, err := packet.AppendPacket(nil, sendOnly(qpn, 0xFFFF), make([]byte, 100))
	require.NoError(t, err)
	env := packet.Envelope{Src: src, Dst: dst, IPFlags: packet.IPv4DontFragment}
	require.NoError(t, env.PutICRC(pkt))
	if bad {
		pkt[len(pkt)-1] ^= 1
	}
	return pkt
}

// handle runs each worker's batch on it under its run lock, as a drain does, and clears batches.
func (x *testRig) handle(batches []*rxBatch) {
	for i, b := range batches {
		if b == nil {
			continue
		}
		w := x.rt.workers[i]
		w.run.Lock()
		w.receive(b, x.clk.Now())
		w.run.Unlock()
		batches[i] = nil
	}
}

func TestReceivePathChecksAndDelivery(t *testing.T) {
	x := newRig(t, "10.0.0.1")
	q, e := x.create(t, qp.TypeRC)
	peer := newRawPeer(t, x, "10.0.0.2")
	dst := mustAddr("10.0.0.1")

	peer.send(t, dst, sendOnly(q.qpn, 0xFFFF), []byte("hello"), false)
	waitRan(t, e)
	e.mu.Lock()
	require.Len(t, e.received, 1)
	assert.Equal(t, q.qpn, e.received[0].DestQP)
	assert.Equal(t, uint32(5), uint32(e.received[0].PSN))
	assert.Equal(t, peer.addr, e.from[0].Src)
	assert.Equal(t, netip.AddrPortFrom(dst, packet.UDPPort), e.from[0].Dst)
	e.mu.Unlock()

	// Each of these is dropped before any engine sees it, and counted.
	peer.send(t, dst, sendOnly(q.qpn, 0xFFFF), []byte("bad icrc"), true)
	peer.send(t, dst, sendOnly(q.qpn, 0x8001), nil, false)
	peer.send(t, dst, sendOnly(999, 0xFFFF), nil, false)
	// The destination is checked before the ICRC: these are not ICRC errors.
	peer.send(t, dst, sendOnly(999, 0xFFFF), nil, true)
	peer.send(t, dst, sendOnly(packet.MulticastQPN, 0xFFFF), nil, true)
	peer.send(t, dst, sendOnly(0, 0xFFFF), nil, false)
	peer.send(t, dst, sendOnly(packet.MulticastQPN, 0xFFFF), nil, false)
	_, err := peer.ep.Send([]netio.Message{{Buf: []byte{1, 2, 3}, Src: peer.addr, Dst: netip.AddrPortFrom(dst, packet.UDPPort)}})
	require.NoError(t, err)
	// The limited-membership form of the default P_Key is accepted; it marks the end of the drops.
	peer.send(t, dst, sendOnly(q.qpn, 0x7FFF), nil, false)
	waitRan(t, e)
	c := x.rt.Counters()
	for id, want := range map[counter.ID]uint64{
		counter.RcvdICRCErr: 1, counter.RcvdBadPKey: 1, counter.RcvdUnknownQPN: 3,
		counter.RcvdNoMcastGroup: 2, counter.RcvdMalformed: 1,
	} {
		assert.Equal(t, want, c.Get(id), id.Name())
	}
	e.mu.Lock()
	assert.Len(t, e.received, 2)
	e.mu.Unlock()
}

func TestMulticastFanOut(t *testing.T) {
	group := mustAddr("239.1.1.1")
	// Attaching the first QP joins the stack's fabric endpoint to the group.
	x := newRig(t, "10.0.0.1")
	var engines []*fakeEngine
	for i := range 3 {
		q, e := x.create(t, qp.TypeUD)
		engines = append(engines, e)
		if i < 2 {
			require.NoError(t, q.Attach(group))
		}
	}
	peer := newRawPeer(t, x, "10.0.0.2")
	h := &packet.Headers{BTH: packet.BTHFields{Opcode: packet.UDSendOnly, PKey: 0xFFFF, DestQP: packet.MulticastQPN},
		DETH: packet.DETHFields{QKey: 1, SrcQP: 20}}
	peer.send(t, group, h, []byte("to the group"), false)
	waitRan(t, engines[0])
	waitRan(t, engines[1])
	for i, e := range engines {
		e.mu.Lock()
		n := len(e.received)
		e.mu.Unlock()
		assert.Equal(t, map[bool]int{true: 1, false: 0}[i < 2], n, "copies QP %d received", i)
	}
}

// Attaching checks the group's limit under the lock that inserts, so concurrent attaches cannot
// exceed it.
func TestMcastAttachLimitConcurrent(t *testing.T) {
	group := mustAddr("239.1.1.2")
	x := newRig(t, "10.0.0.1")
	const n = MaxMcastQPAttach + 8
	var hs []*QP
	for range n {
		q, _ := x.create(t, qp.TypeUD)
		hs = append(hs, q)
	}
	var ok atomic.Int32
	var wg sync.WaitGroup
	for _, h := range hs {
		wg.Go(func() {
			if h.Attach(group) == nil {
				ok.Add(1)
			} else if err := h.Attach(group); !errors.Is(err, ErrGroupFull) && !errors.Is(err, ErrAttached) {
				assert.Fail(t, fmt.Sprintf("attach: %v", err))
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int32(MaxMcastQPAttach), ok.Load())
	assert.Len(t, x.rt.mcast.members(group), MaxMcastQPAttach)
	require.ErrorIs(t, hs[0].Detach(mustAddr("239.9.9.9")), ErrNotAttached)
}

// A destroyed QP's counters stay in the device totals.
func TestDestroyKeepsCounters(t *testing.T) {
	x := newRig(t, "10.0.0.1")
	q, e := x.create(t, qp.TypeUD)
	e.ctr.Add(counter.RcvdBytes, 40)
	assert.Equal(t, uint64(40), x.rt.Counters().Get(counter.RcvdBytes))
	require.NoError(t, q.Destroy())
	assert.Equal(t, uint64(40), x.rt.Counters().Get(counter.RcvdBytes))
	assert.Nil(t, x.rt.qps.lookup(q.qpn))
	assert.Error(t, q.Destroy())
}

func TestWorkerSendsOutputAndRunsTimers(t *testing.T) {
	x := newRig(t, "10.0.0.1")
	q, e := x.create(t, qp.TypeUD)
	peer := newRawPeer(t, x, "10.0.0.2")
	start := x.clk.Now()

	// Every Run sends one packet to the peer and asks to be run again 10 ms later.
	e.mu.Lock()
	e.onRun = func(now time.Time, out *transport.Output) {
		buf := out.Alloc()[:0]
		h := &packet.Headers{BTH: packet.BTHFields{Opcode: packet.UDSendOnly, PKey: 0xFFFF, DestQP: 77},
			DETH: packet.DETHFields{QKey: 1, SrcQP: q.qpn}}
		pkt, _ := packet.AppendPacket(buf, h, []byte{byte(now.Sub(start) / time.Millisecond)})
		out.Packets = append(out.Packets, transport.Packet{Buf: pkt, Env: packet.Envelope{
			Src: netip.AddrPortFrom(mustAddr("10.0.0.1"), 0xC001), Dst: netip.AddrPortFrom(mustAddr("10.0.0.2"), packet.UDPPort)}})
		e.mu.Lock()
		e.deadline = now.Add(10 * time.Millisecond)
		e.mu.Unlock()
	}
	e.mu.Unlock()

	// A post wakes the worker.
	require.NoError(t, q.PostSend(nil))
	waitRan(t, e)
	msgs := []netio.Message{{Buf: make([]byte, 256)}}
	recv := func() byte {
		t.Helper()
		n, err := peer.ep.Receive(msgs)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		var p packet.Parsed
		require.NoError(t, packet.Parse(msgs[0].Buf, &p))
		assert.Equal(t, netip.AddrPortFrom(mustAddr("10.0.0.1"), 0xC001), msgs[0].Src)
		msgs[0].Buf = msgs[0].Buf[:cap(msgs[0].Buf)]
		return p.Payload()[0]
	}
	assert.Equal(t, byte(0), recv(), "first packet's time in ms")
	// The worker armed its one timer for the engine's deadline; stepping the clock runs it.
	for i := 1; i <= 3; i++ {
		waitTimer(t, x, start.Add(time.Duration(i)*10*time.Millisecond))
		x.clk.AdvanceTo(start.Add(time.Duration(i) * 10 * time.Millisecond))
		waitRan(t, e)
		assert.Equal(t, byte(10*i), recv(), "timer run %d", i)
	}
	assert.Equal(t, uint64(4), q.Counters().Get(counter.SentPkts))
}

// waitTimer waits until the worker has armed the fake clock's earliest timer for at.
func waitTimer(t *testing.T, x *testRig, at time.Time) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := x.clk.WaitNextDeadline(ctx, at); err != nil {
		next, ok := x.clk.NextDeadline()
		require.Fail(t, fmt.Sprintf("no timer armed for %v (next %v, %v)", at, next, ok))
	}
}

// The packets of one QP in a received batch form a burst: all but the last go in through
// ReceiveMore, whatever other QPs' packets sit between them.
func TestWorkerHandsBurstsToEngines(t *testing.T) {
	x := newRig(t, "10.0.0.1")
	qa, ea := x.create(t, qp.TypeRC)
	qb, eb := x.create(t, qp.TypeRC)
	src := netip.AddrPortFrom(mustAddr("10.0.0.2"), 0xC000)
	dst := netip.AddrPortFrom(mustAddr("10.0.0.1"), packet.UDPPort)
	batches := make([]*rxBatch, len(x.rt.workers))
	for _, qpn := range []uint32{qa.qpn, qb.qpn, qa.qpn, qa.qpn, qb.qpn} {
		m := netio.Message{Buf: signed(t, qpn, src, dst, false), Src: src, Dst: dst}
		w, taken := x.rt.classify(m.Buf, &m, nil, batches, nil)
		require.GreaterOrEqual(t, w, 0, "packet dropped")
		require.True(t, taken)
	}
	x.handle(batches)
	for _, c := range []struct {
		e    *fakeEngine
		want []bool
	}{{ea, []bool{true, true, false}}, {eb, []bool{true, false}}} {
		c.e.mu.Lock()
		assert.Equal(t, c.want, c.e.more, "QP %d: ReceiveMore per packet", c.e.q.QPN())
		c.e.mu.Unlock()
	}
}

func TestClassifyAllocations(t *testing.T) {
	x := newRig(t, "10.0.0.1")
	q, _ := x.create(t, qp.TypeRC)
	src := netip.AddrPortFrom(mustAddr("10.0.0.2"), 0xC000)
	dst := netip.AddrPortFrom(mustAddr("10.0.0.1"), packet.UDPPort)
	pkt, _ := packet.AppendPacket(nil, sendOnly(q.qpn, 0xFFFF), make([]byte, 1024))
	env := packet.Envelope{Src: src, Dst: dst, IPFlags: packet.IPv4DontFragment}
	require.NoError(t, env.PutICRC(pkt))
	batches := make([]*rxBatch, len(x.rt.workers))
	m := netio.Message{Src: src, Dst: dst}
	allocs := testing.AllocsPerRun(1000, func() {
		buf := getBuf()
		m.Buf = buf[:copy(buf, pkt)]
		x.rt.classify(m.Buf, &m, nil, batches, nil)
		for i, b := range batches {
			if b != nil {
				dropBatch(b)
				batches[i] = nil
			}
		}
	})
	assert.Zero(t, allocs, "classify allocations per packet")
}

func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }

// Poll that finds the network empty runs the engines whose deadline passed, on the polling
// goroutine: a program that busy-polls drives its QPs' timers although the timer's goroutine
// has not run (the fake clock's time slips past the deadline without firing it).
func TestPollRunsDueWork(t *testing.T) {
	x := newRig(t, "10.0.0.1")
	q, e := x.create(t, qp.TypeUD)
	due := x.clk.Now().Add(10 * time.Millisecond)
	e.mu.Lock()
	e.onRun = func(now time.Time, _ *transport.Output) {
		e.mu.Lock()
		if now.Before(due) {
			e.deadline = due
		} else {
			e.deadline = time.Time{}
		}
		e.mu.Unlock()
	}
	e.mu.Unlock()
	require.NoError(t, q.PostSend(nil))
	waitRan(t, e)
	waitTimer(t, x, due)

	x.clk.Slip(10 * time.Millisecond)
	// Poll may find the receive goroutine holding the network; it then returns false at once.
	end := time.Now().Add(10 * time.Second)
	for ran := false; !ran; {
		require.True(t, time.Now().Before(end), "Poll never ran the due engine")
		x.rt.Poll()
		select {
		case <-e.ran:
			ran = true
		default:
			runtime.Gosched()
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	assert.Equal(t, 2, e.runs, "the post's run and the due one")
	assert.True(t, e.deadline.IsZero(), "the due run saw the deadline passed")
}

// A verb runs after the packets already queued for its QP's worker: a destroy that a peer's DREQ
// set off must not overtake the ACK that peer sent before it.
func TestVerbFollowsDeliveredPackets(t *testing.T) {
	x := newRig(t, "10.0.0.1")
	h, e := x.create(t, qp.TypeRC)
	src := netip.AddrPortFrom(mustAddr("10.0.0.2"), 0xC000)
	dst := netip.AddrPortFrom(mustAddr("10.0.0.1"), packet.UDPPort)
	batches := make([]*rxBatch, len(x.rt.workers))
	m := netio.Message{Buf: signed(t, h.qpn, src, dst, false), Src: src, Dst: dst}
	w, taken := x.rt.classify(m.Buf, &m, nil, batches, nil)
	require.GreaterOrEqual(t, w, 0, "packet dropped")
	require.True(t, taken)
	// Queued, as dispatch queues a share, and not yet handled by anyone.
	x.rt.workers[w].enqueue(batches[w])

	require.NoError(t, h.Destroy())
	e.mu.Lock()
	defer e.mu.Unlock()
	assert.Len(t, e.received, 1, "the packet queued before the destroy reached the engine")
}

// dispatch queues every worker's share of a read before it runs any: the worker that runs first
// (here the last packet's, on the reading goroutine) finds the other share already queued, so a
// verb that its packets set off finds the other QP's packets ahead of it (see worker.do).
func TestDispatchQueuesEveryShareFirst(t *testing.T) {
	x := newRig(t, "10.0.0.1")
	require.Len(t, x.rt.workers, 2)
	var ha, hb *QP
	var ea *fakeEngine
	for ha == nil || hb == nil {
		h, e := x.create(t, qp.TypeRC)
		switch {
		case h.w == x.rt.workers[0] && ha == nil:
			ha, ea = h, e
		case h.w == x.rt.workers[1] && hb == nil:
			hb = h
		}
	}
	other := x.rt.workers[1]
	queued := -1
	ea.onReceive = func(time.Time, *transport.Output) {
		other.mu.Lock()
		queued = len(other.inbox)
		other.mu.Unlock()
	}
	src := netip.AddrPortFrom(mustAddr("10.0.0.2"), 0xC000)
	dst := netip.AddrPortFrom(mustAddr("10.0.0.1"), packet.UDPPort)
	rx := &rxScratch{msgs: make([]netio.Message, 2), batches: make([]*rxBatch, 2)}
	for i, qpn := range []uint32{hb.qpn, ha.qpn} {
		rx.msgs[i] = netio.Message{Buf: signed(t, qpn, src, dst, false), Src: src, Dst: dst}
	}
	// The second worker's goroutine must not take its share meanwhile.
	other.run.Lock()
	x.rt.dispatch(rx, 2, false)
	other.run.Unlock()
	rx.release()
	waitRan(t, ea)
	assert.Equal(t, 1, queued, "the other worker's share when the first ran")
}
