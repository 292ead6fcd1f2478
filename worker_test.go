package gorxe

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/gorxe/gorxe/netio"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
	"github.com/gorxe/gorxe/transport"
)

// fakeEngine records what the worker hands it and produces what the test tells it to.
type fakeEngine struct {
	mu       sync.Mutex
	q        *qp.QP
	received []packet.BTHFields
	from     []packet.Envelope
	more     []bool // whether each packet came through ReceiveMore
	runs     int
	deadline time.Time
	// onRun, if set, is called by Run and may queue packets.
	onRun func(now time.Time, out *transport.Output)
	ran   chan struct{}
}

func (e *fakeEngine) Receive(now time.Time, p *packet.Parsed, from packet.Envelope, out *transport.Output) {
	e.record(p, from, false)
}

func (e *fakeEngine) ReceiveMore(now time.Time, p *packet.Parsed, from packet.Envelope, out *transport.Output) {
	e.record(p, from, true)
}

func (e *fakeEngine) record(p *packet.Parsed, from packet.Envelope, more bool) {
	e.mu.Lock()
	e.received = append(e.received, p.BTH().Fields())
	e.from = append(e.from, from)
	e.more = append(e.more, more)
	e.mu.Unlock()
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

// withFakeEngines makes CreateQP build fake engines for the rest of the test.
func withFakeEngines(t *testing.T) chan *fakeEngine {
	made := make(chan *fakeEngine, 16)
	old := newEngine
	newEngine = func(_ *transport.Env, q *qp.QP) engine {
		e := &fakeEngine{q: q, ran: make(chan struct{}, 64)}
		made <- e
		return e
	}
	t.Cleanup(func() { newEngine = old })
	return made
}

// rawPeer is a bare fabric endpoint that sends hand-built RoCEv2 packets.
type rawPeer struct {
	ep   *netio.Endpoint
	addr netip.AddrPort
}

func newRawPeer(t *testing.T, f *testFabric, addr string) *rawPeer {
	a := netip.MustParseAddr(addr)
	ep, err := f.fab.NewEndpoint(0, a)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ep.Close() })
	return &rawPeer{ep: ep, addr: netip.AddrPortFrom(a, 0xC123)}
}

// send builds a packet with h and payload, fixes its ICRC for the path (unless corrupt), and sends
// it to dst.
func (r *rawPeer) send(t *testing.T, dst netip.Addr, h *packet.Headers, payload []byte, corrupt bool) {
	t.Helper()
	pkt, err := packet.AppendPacket(nil, h, payload)
	if err != nil {
		t.Fatal(err)
	}
	to := netip.AddrPortFrom(dst, DefaultPort)
	env := packet.Envelope{Src: r.addr, Dst: to, IPFlags: packet.IPv4DontFragment}
	if err := env.PutICRC(pkt); err != nil {
		t.Fatal(err)
	}
	if corrupt {
		pkt[len(pkt)-1] ^= 0x40
	}
	if _, err := r.ep.Send([]netio.Message{{Buf: pkt, Src: r.addr, Dst: to}}); err != nil {
		t.Fatal(err)
	}
}

func waitRan(t *testing.T, e *fakeEngine) {
	t.Helper()
	select {
	case <-e.ran:
	case <-time.After(10 * time.Second):
		t.Fatal("the engine was not called")
	}
}

func sendOnly(qpn uint32, pkey uint16) *packet.Headers {
	return &packet.Headers{BTH: packet.BTHFields{Opcode: packet.RCSendOnly, PKey: pkey, DestQP: qpn, PSN: 5}}
}

func TestReceivePathChecksAndDelivery(t *testing.T) {
	made := withFakeEngines(t)
	f := newTestFabric(t)
	d := f.open(t, "10.0.0.1")
	x := newTestQPs(t, d)
	q := x.create(t, QPTypeRC)
	e := <-made
	peer := newRawPeer(t, f, "10.0.0.2")
	dst := mustAddr("10.0.0.1")

	peer.send(t, dst, sendOnly(q.QPN(), 0xFFFF), []byte("hello"), false)
	waitRan(t, e)
	e.mu.Lock()
	if len(e.received) != 1 || e.received[0].DestQP != q.QPN() || e.received[0].PSN != 5 {
		t.Errorf("engine received %+v", e.received)
	}
	if p := e.from[0]; p.Src != peer.addr || p.Dst != netip.AddrPortFrom(dst, DefaultPort) {
		t.Errorf("path %+v", p)
	}
	e.mu.Unlock()

	// Each of these is dropped before any engine sees it, and counted.
	peer.send(t, dst, sendOnly(q.QPN(), 0xFFFF), []byte("bad icrc"), true)
	peer.send(t, dst, sendOnly(q.QPN(), 0x8001), nil, false)
	peer.send(t, dst, sendOnly(999, 0xFFFF), nil, false)
	peer.send(t, dst, sendOnly(0, 0xFFFF), nil, false)
	peer.send(t, dst, sendOnly(packet.MulticastQPN, 0xFFFF), nil, false)
	peer.ep.Send([]netio.Message{{Buf: []byte{1, 2, 3}, Src: peer.addr, Dst: netip.AddrPortFrom(dst, DefaultPort)}})
	// The limited-membership form of the default P_Key is accepted; it marks the end of the drops.
	peer.send(t, dst, sendOnly(q.QPN(), 0x7FFF), nil, false)
	waitRan(t, e)
	c := d.Counters()
	want := Counters{RcvdICRCErr: 1, RcvdBadPKey: 1, RcvdUnknownQPN: 2, RcvdNoMcastGroup: 1, RcvdMalformed: 1}
	got := Counters{RcvdICRCErr: c.RcvdICRCErr, RcvdBadPKey: c.RcvdBadPKey, RcvdUnknownQPN: c.RcvdUnknownQPN,
		RcvdNoMcastGroup: c.RcvdNoMcastGroup, RcvdMalformed: c.RcvdMalformed}
	if got != want {
		t.Errorf("drop counters %+v, want %+v", got, want)
	}
	if p, _ := d.QueryPort(1); p.BadPKeyCntr != 1 {
		t.Errorf("BadPKeyCntr %d", p.BadPKeyCntr)
	}
	e.mu.Lock()
	if len(e.received) != 2 {
		t.Errorf("engine received %d packets, want 2", len(e.received))
	}
	e.mu.Unlock()
}

func TestMulticastFanOut(t *testing.T) {
	made := withFakeEngines(t)
	f := newTestFabric(t)
	group := mustAddr("239.1.1.1")
	// The fabric delivers by destination address, so the device listens on the group address too.
	d, err := Open(Config{Addr: mustAddr("10.0.0.1"), Clock: f.clk, Workers: 2,
		Network: func(addrs []netip.Addr, port uint16) (netio.Conn, error) {
			return f.fab.NewEndpoint(port, append(addrs, group)...)
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	x := newTestQPs(t, d)
	var engines []*fakeEngine
	for range 3 {
		q := x.create(t, QPTypeUD)
		e := <-made
		engines = append(engines, e)
		if len(engines) < 3 {
			if err := q.AttachMcast(GIDFromAddr(group), 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	peer := newRawPeer(t, f, "10.0.0.2")
	h := &packet.Headers{BTH: packet.BTHFields{Opcode: packet.UDSendOnly, PKey: 0xFFFF, DestQP: packet.MulticastQPN},
		DETH: packet.DETHFields{QKey: 1, SrcQP: 20}}
	peer.send(t, group, h, []byte("to the group"), false)
	waitRan(t, engines[0])
	waitRan(t, engines[1])
	for i, e := range engines {
		e.mu.Lock()
		n := len(e.received)
		e.mu.Unlock()
		if want := map[bool]int{true: 1, false: 0}[i < 2]; n != want {
			t.Errorf("QP %d received %d copies, want %d", i, n, want)
		}
	}
}

func TestWorkerSendsOutputAndRunsTimers(t *testing.T) {
	made := withFakeEngines(t)
	f := newTestFabric(t)
	d := f.open(t, "10.0.0.1")
	x := newTestQPs(t, d)
	q := x.create(t, QPTypeUD)
	e := <-made
	peer := newRawPeer(t, f, "10.0.0.2")
	start := f.clk.Now()

	// Every Run sends one packet to the peer and asks to be run again 10 ms later.
	e.mu.Lock()
	e.onRun = func(now time.Time, out *transport.Output) {
		buf := out.Alloc()[:0]
		h := &packet.Headers{BTH: packet.BTHFields{Opcode: packet.UDSendOnly, PKey: 0xFFFF, DestQP: 77},
			DETH: packet.DETHFields{QKey: 1, SrcQP: q.QPN()}}
		pkt, _ := packet.AppendPacket(buf, h, []byte{byte(now.Sub(start) / time.Millisecond)})
		out.Packets = append(out.Packets, transport.Packet{Buf: pkt, Env: packet.Envelope{
			Src: netip.AddrPortFrom(mustAddr("10.0.0.1"), 0xC001), Dst: netip.AddrPortFrom(mustAddr("10.0.0.2"), DefaultPort)}})
		e.mu.Lock()
		e.deadline = now.Add(10 * time.Millisecond)
		e.mu.Unlock()
	}
	e.mu.Unlock()

	// A post wakes the worker through the QP table's wake hook.
	wakeQP(q.q)
	waitRan(t, e)
	msgs := []netio.Message{{Buf: make([]byte, 256)}}
	recv := func() byte {
		t.Helper()
		n, err := peer.ep.Receive(msgs)
		if err != nil || n != 1 {
			t.Fatalf("peer Receive: %d, %v", n, err)
		}
		var p packet.Parsed
		if err := packet.Parse(msgs[0].Buf, &p); err != nil {
			t.Fatal(err)
		}
		if msgs[0].Src != netip.AddrPortFrom(mustAddr("10.0.0.1"), 0xC001) {
			t.Errorf("sent from %v", msgs[0].Src)
		}
		msgs[0].Buf = msgs[0].Buf[:cap(msgs[0].Buf)]
		return p.Payload()[0]
	}
	if got := recv(); got != 0 {
		t.Errorf("first packet at %d ms", got)
	}
	// The worker armed its one timer for the engine's deadline; stepping the clock runs it.
	for i := 1; i <= 3; i++ {
		waitTimer(t, f, start.Add(time.Duration(i)*10*time.Millisecond))
		f.clk.AdvanceTo(start.Add(time.Duration(i) * 10 * time.Millisecond))
		waitRan(t, e)
		if got := recv(); got != byte(10*i) {
			t.Errorf("timer run %d sent at %d ms", i, got)
		}
	}
}

// waitTimer waits until the worker has armed the fake clock's earliest timer for at.
func waitTimer(t *testing.T, f *testFabric, at time.Time) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.clk.WaitNextDeadline(ctx, at); err != nil {
		next, ok := f.clk.NextDeadline()
		t.Fatalf("no timer armed for %v (next %v, %v)", at, next, ok)
	}
}

// The packets of one QP in a received batch form a burst: all but the last go in through
// ReceiveMore, whatever other QPs' packets sit between them.
func TestWorkerHandsBurstsToEngines(t *testing.T) {
	made := withFakeEngines(t)
	f := newTestFabric(t)
	d := f.open(t, "10.0.0.1")
	x := newTestQPs(t, d)
	qa, qb := x.create(t, QPTypeRC), x.create(t, QPTypeRC)
	ea, eb := <-made, <-made
	src := netip.AddrPortFrom(mustAddr("10.0.0.2"), 0xC000)
	dst := netip.AddrPortFrom(mustAddr("10.0.0.1"), DefaultPort)
	batches := make([]*rxBatch, len(d.workers))
	for _, qpn := range []uint32{qa.QPN(), qb.QPN(), qa.QPN(), qa.QPN(), qb.QPN()} {
		pkt, _ := packet.AppendPacket(getBuf()[:0], sendOnly(qpn, 0xFFFF), nil)
		env := packet.Envelope{Src: src, Dst: dst, IPFlags: packet.IPv4DontFragment}
		env.PutICRC(pkt)
		m := netio.Message{Buf: pkt, Src: src, Dst: dst}
		if d.classify(&m, batches) < 0 {
			t.Fatal("packet dropped")
		}
		putBuf(m.Buf)
	}
	for i, b := range batches {
		if b == nil {
			continue
		}
		w := d.workers[i]
		w.run.Lock()
		w.receive(b, f.clk.Now())
		w.run.Unlock()
	}
	for _, c := range []struct {
		e    *fakeEngine
		want []bool
	}{{ea, []bool{true, true, false}}, {eb, []bool{true, false}}} {
		c.e.mu.Lock()
		if fmt.Sprint(c.e.more) != fmt.Sprint(c.want) {
			t.Errorf("QP %d: ReceiveMore per packet %v, want %v", c.e.q.QPN(), c.e.more, c.want)
		}
		c.e.mu.Unlock()
	}
}

func TestClassifyAllocations(t *testing.T) {
	withFakeEngines(t)
	f := newTestFabric(t)
	d := f.open(t, "10.0.0.1")
	x := newTestQPs(t, d)
	q := x.create(t, QPTypeRC)
	src := netip.AddrPortFrom(mustAddr("10.0.0.2"), 0xC000)
	dst := netip.AddrPortFrom(mustAddr("10.0.0.1"), DefaultPort)
	pkt, _ := packet.AppendPacket(nil, sendOnly(q.QPN(), 0xFFFF), make([]byte, 1024))
	env := packet.Envelope{Src: src, Dst: dst, IPFlags: packet.IPv4DontFragment}
	env.PutICRC(pkt)
	batches := make([]*rxBatch, len(d.workers))
	m := netio.Message{Buf: getBuf(), Src: src, Dst: dst}
	allocs := testing.AllocsPerRun(1000, func() {
		m.Buf = m.Buf[:copy(m.Buf[:cap(m.Buf)], pkt)]
		d.classify(&m, batches)
		for i, b := range batches {
			if b != nil {
				d.dropBatch(b)
				batches[i] = nil
			}
		}
	})
	if allocs != 0 {
		t.Errorf("classify allocates %.1f times per packet", allocs)
	}
	putBuf(m.Buf)
}
