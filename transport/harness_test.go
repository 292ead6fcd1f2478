package transport

import (
	"cmp"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

// The harness connects transport engines through a deterministic in-memory network. Every packet
// an engine emits is parsed and ICRC-checked with the packet package (a malformed packet fails the
// test), may then be dropped, reordered, duplicated or corrupted by a seeded source, and is
// delivered to the engine its destination address and QPN name. Time is fake: when nothing is in
// flight the clock jumps to the earliest engine deadline.

// hStart is the fake clock's starting point.
var hStart = time.Unix(1000, 0)

// hFaults are per-packet probabilities of network faults.
type hFaults struct {
	Loss, Reorder, Dup, Corrupt float64
}

// hStats counts what the network did.
type hStats struct {
	Sent, Delivered, Lost, Reordered, Duplicated, Corrupted, CorruptDropped, Unroutable, Overflowed int
	Views                                                                                           int // packets emitted with their payload left in registered memory (Output.Views)
}

// hPacket is a packet in flight.
type hPacket struct {
	buf   []byte
	path  packet.Envelope
	at    time.Time // when it was emitted
	ready time.Time // when a slow receiver gets to it (see hDevice.service)
}

// harness is the network, the clock and the devices.
type harness struct {
	t      *testing.T
	now    time.Time
	rng    *rand.Rand
	faults hFaults
	stats  hStats
	devs   []*hDevice
	flight []hPacket // delivered in order, one round at a time
	// tap, when set, sees every packet an engine emits (already checked) and may drop it by
	// returning false. Faults apply after it.
	tap func(p *hPacket, parsed *packet.Parsed) bool
	// trace, when set, records every packet emitted (after tap and faults are decided).
	trace []hPacket
	keep  bool // keep a trace
}

// newHarness returns an empty fault-free network with its clock at hStart.
func newHarness(t *testing.T) *harness {
	return &harness{t: t, now: hStart, rng: rand.New(rand.NewPCG(1, 2))}
}

// seed replaces the fault source.
func (h *harness) seed(s uint64) { h.rng = rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15)) }

// hDevice is one device: an address, a key table, a QP table and the engines of its QPs.
type hDevice struct {
	h       *harness
	addr    netip.Addr
	mem     *mr.Table
	qps     *qp.Table
	pd      *mr.PD
	dev     *Env
	engines []*Engine         // sorted by QPN
	marks   map[*Engine]hMark // what the harness last saw of each engine's QP
	events  []qp.Event
	out     Output // out.Want chooses what reported collects
	// reported holds the events the engines recorded in out, in order.
	reported []Event
	// service, when set, makes the device a slow receiver: each packet takes that long to
	// process, so packets queue in inbox (as in a software stack on an emulated machine).
	service   time.Duration
	busyUntil time.Time
	inbox     []hPacket
	// queue, when set with service, is how many packets the inbox holds: more are dropped, as by
	// a virtual NIC whose receive ring is full, and counted in hStats.Overflowed.
	queue int
	// zone, when set, is the interface an IPv6 link-local device sits on: its source address
	// carries the zone, and packets it receives name both ends with it, as a socket bound to a
	// link-local address reports them. The wire (and so every GID) has no zones.
	zone string
	// stall, when set, models a descheduled process: it returns when the device runs again if
	// it is stalled at t, or the zero time. A stalled device runs no engine (no timers fire) and
	// its arriving packets wait in inbox, as in a socket buffer nobody reads.
	stall func(t time.Time) time.Time
}

// hZoned gives a the zone a socket on interface zone reports it with: IPv6 link-local addresses
// carry it, every other address has none.
func hZoned(a netip.Addr, zone string) netip.Addr {
	a = a.WithZone("")
	if zone != "" && a.Is6() && a.IsLinkLocalUnicast() {
		return a.WithZone(zone)
	}
	return a
}

// runsAt returns t, or when the device runs again if it is stalled at t.
func (d *hDevice) runsAt(t time.Time) time.Time {
	if d.stall != nil {
		if r := d.stall(t); !r.IsZero() {
			return r
		}
	}
	return t
}

// deviceAt returns the device with address a, or nil.
func (h *harness) deviceAt(a netip.Addr) *hDevice {
	for _, d := range h.devs {
		if d.addr == a.WithZone("") {
			return d
		}
	}
	return nil
}

// HandleEvent records an asynchronous event.
func (d *hDevice) HandleEvent(e qp.Event) { d.events = append(d.events, e) }

// hMark is what the harness last saw of a QP: its send queue's tail and its attribute version.
type hMark struct{ tail, version uint64 }

// due reports whether e's QP was posted to or changed since the harness last looked: the device
// runtime is told of both by the verbs, and runs the engine.
func (d *hDevice) due(e *Engine) bool {
	_, _, tail := e.q.SendQueue().Positions()
	m := hMark{tail, e.q.AttrVersion()}
	if d.marks[e] == m {
		return false
	}
	d.marks[e] = m
	return true
}

// engine returns the engine of QP qpn, or nil.
func (d *hDevice) engine(qpn uint32) *Engine {
	for _, e := range d.engines {
		if e.q.QPN() == qpn && !e.q.Destroyed() {
			return e
		}
	}
	return nil
}

// count sums counter id over the device's engines, the device total the stack reports.
func (d *hDevice) count(id counter.ID) uint64 {
	var n uint64
	for _, e := range d.engines {
		n += e.Counters().Load(id)
	}
	return n
}

// eventTypes returns the recorded events of q.
func (d *hDevice) eventTypes(q *qp.QP) []qp.EventType {
	var ts []qp.EventType
	for _, e := range d.events {
		if e.QP == q {
			ts = append(ts, e.Type)
		}
	}
	return ts
}

// device adds a device with the given address; its GID index 0 (and 1, like rxe's IPv4 entry)
// resolve to it.
func (h *harness) device(addr string) *hDevice {
	h.t.Helper()
	d := &hDevice{h: h, addr: netip.MustParseAddr(addr), mem: mr.NewTable(), marks: map[*Engine]hMark{}}
	pd, err := d.mem.AllocPD()
	require.NoError(h.t, err)
	d.pd = pd
	d.dev = &Env{
		Mem: d.mem,
		SourceAddr: func(i uint8) (netip.Addr, bool) {
			return hZoned(d.addr, d.zone), i <= 1
		},
	}
	d.qps = qp.NewTable(qp.Config{Limits: qp.DefaultLimits(), Events: d, Route: d.dev.Route})
	d.out.Alloc = func() []byte { return make([]byte, 0, MaxPacketSize) }
	h.devs = append(h.devs, d)
	return d
}

// hEndpoint is a QP with its engine and CQs.
type hEndpoint struct {
	d        *hDevice
	q        *qp.QP
	e        *Engine
	scq, rcq *cq.CQ
	o        hQPOptions
}

// hQPOptions configure a QP; zero fields take the defaults of withDefaults.
type hQPOptions struct {
	typ          qp.Type
	mtu          qp.MTU
	access       mr.Access
	sqPSN        uint32 // the PSN this QP starts sending with
	timeout      uint8
	retryCnt     uint8
	rnrRetry     uint8
	minRNRTimer  uint8
	maxRdAtomic  uint8
	maxDestRd    uint8
	caps         qp.Caps
	sigAll       bool
	cqDepth      int
	qkey         uint32
	noRetryDflts bool // keep retryCnt/rnrRetry 0 instead of defaulting them to 7
	zeroTimeout  bool // keep timeout 0 (no retransmit timer) instead of defaulting it to 14
}

func (o hQPOptions) withDefaults() hQPOptions {
	if o.typ == 0 {
		o.typ = qp.TypeRC
	}
	if o.mtu == 0 {
		o.mtu = qp.MTU1024
	}
	if o.access == 0 {
		o.access = mr.AccessLocalWrite | mr.AccessRemoteWrite | mr.AccessRemoteRead | mr.AccessRemoteAtomic |
			mr.AccessFlushGlobal | mr.AccessFlushPersistent
	}
	if o.timeout == 0 && !o.zeroTimeout {
		o.timeout = 14
	}
	if !o.noRetryDflts {
		if o.retryCnt == 0 {
			o.retryCnt = 7
		}
		if o.rnrRetry == 0 {
			o.rnrRetry = 7
		}
	}
	if o.minRNRTimer == 0 {
		o.minRNRTimer = 1
	}
	if o.maxRdAtomic == 0 {
		o.maxRdAtomic = 16
	}
	if o.maxDestRd == 0 {
		o.maxDestRd = 16
	}
	if o.caps == (qp.Caps{}) {
		o.caps = qp.Caps{MaxSendWR: 256, MaxRecvWR: 256, MaxSendSGE: 8, MaxRecvSGE: 8, MaxInlineData: 512}
	}
	if o.cqDepth == 0 {
		o.cqDepth = 4096
	}
	if o.qkey == 0 {
		o.qkey = 0x11111111
	}
	return o
}

// createQP creates a QP in RESET with its own CQs and an engine.
func (d *hDevice) createQP(o hQPOptions) *hEndpoint {
	t := d.h.t
	t.Helper()
	o = o.withDefaults()
	scq, err := cq.New(o.cqDepth, cq.Options{})
	require.NoError(t, err)
	rcq, err := cq.New(o.cqDepth, cq.Options{})
	require.NoError(t, err)
	q, err := d.qps.CreateQP(d.pd, &qp.InitAttr{SendCQ: scq, RecvCQ: rcq, Cap: o.caps, Type: o.typ, SQSigAll: o.sigAll})
	require.NoError(t, err)
	e := New(d.dev, q)
	d.marks[e] = hMark{version: q.AttrVersion()}
	d.engines = append(d.engines, e)
	slices.SortFunc(d.engines, func(a, b *Engine) int { return cmp.Compare(a.q.QPN(), b.q.QPN()) })
	return &hEndpoint{d: d, q: q, e: e, scq: scq, rcq: rcq, o: o}
}

// hAV16 returns the GID form of an address (IPv4-mapped for IPv4).
func hAV16(a netip.Addr) [16]byte {
	if a.Is4() {
		return netip.AddrFrom16(a.As16()).As16()
	}
	return a.As16()
}

// connect moves a connected (RC or UC) QP through INIT and RTR to RTS, pointing it at peer.
func (ep *hEndpoint) connect(peer *hEndpoint) {
	t := ep.d.h.t
	t.Helper()
	o := ep.o
	require.NoError(t, ep.q.Modify(&qp.Attr{State: qp.StateInit, PortNum: 1, AccessFlags: o.access},
		qp.AttrState|qp.AttrPKeyIndex|qp.AttrPort|qp.AttrAccessFlags))
	av := qp.AddressVector{IsGlobal: true, PortNum: 1, GRH: qp.GlobalRoute{DGID: hAV16(peer.d.addr), HopLimit: 64, SGIDIndex: 1}}
	rtr := &qp.Attr{
		State: qp.StateRTR, PathMTU: o.mtu, DestQPNum: peer.q.QPN(), RQPSN: peer.o.sqPSN,
		MaxDestRdAtomic: o.maxDestRd, MinRNRTimer: o.minRNRTimer, AHAttr: av,
	}
	mask := qp.AttrState | qp.AttrAV | qp.AttrPathMTU | qp.AttrDestQPN | qp.AttrRQPSN
	if o.typ == qp.TypeRC {
		mask |= qp.AttrMaxDestRdAtomic | qp.AttrMinRNRTimer
	}
	require.NoError(t, ep.q.Modify(rtr, mask))
	rts := &qp.Attr{
		State: qp.StateRTS, SQPSN: o.sqPSN, Timeout: o.timeout, RetryCnt: o.retryCnt, RNRRetry: o.rnrRetry,
		MaxRdAtomic: o.maxRdAtomic,
	}
	mask = qp.AttrState | qp.AttrSQPSN
	if o.typ == qp.TypeRC {
		mask |= qp.AttrTimeout | qp.AttrRetryCnt | qp.AttrRNRRetry | qp.AttrMaxQPRdAtomic
	}
	require.NoError(t, ep.q.Modify(rts, mask))
}

// activateUD moves a UD or GSI QP to RTS.
func (ep *hEndpoint) activateUD() {
	t := ep.d.h.t
	t.Helper()
	mask := qp.AttrState | qp.AttrPKeyIndex | qp.AttrQKey
	if ep.o.typ == qp.TypeUD {
		mask |= qp.AttrPort
	}
	require.NoError(t, ep.q.Modify(&qp.Attr{State: qp.StateInit, PortNum: 1, QKey: ep.o.qkey}, mask))
	require.NoError(t, ep.q.Modify(&qp.Attr{State: qp.StateRTR}, qp.AttrState))
	require.NoError(t, ep.q.Modify(&qp.Attr{State: qp.StateRTS, SQPSN: ep.o.sqPSN}, qp.AttrState|qp.AttrSQPSN))
}

// pair creates a connected pair of QPs on two devices (created on first use) with options a and
// b (b defaults to a).
func (h *harness) pair(a hQPOptions, b ...hQPOptions) (*hEndpoint, *hEndpoint) {
	h.t.Helper()
	for len(h.devs) < 2 {
		h.device([]string{"10.0.0.1", "10.0.0.2"}[len(h.devs)])
	}
	ob := a
	if len(b) > 0 {
		ob = b[0]
	}
	x, y := h.devs[0].createQP(a), h.devs[1].createQP(ob)
	x.connect(y)
	y.connect(x)
	return x, y
}

// hRegion is a registered buffer.
type hRegion struct {
	mr  *mr.MR
	buf []byte
}

// sge returns an SGE over buf[off:off+n].
func (r hRegion) sge(off, n int) mr.SGE {
	return mr.SGE{Addr: r.mr.IOVA() + uint64(off), Length: uint32(n), LKey: r.mr.LKey()}
}

// region registers n zeroed bytes on the device.
func (d *hDevice) region(n int, access mr.Access) hRegion {
	d.h.t.Helper()
	if access == 0 {
		access = mr.AccessLocalWrite | mr.AccessRemoteWrite | mr.AccessRemoteRead | mr.AccessRemoteAtomic |
			mr.AccessFlushGlobal | mr.AccessFlushPersistent
	}
	buf := make([]byte, n)
	m, err := d.mem.RegMR(d.pd, buf, access)
	require.NoError(d.h.t, err)
	return hRegion{mr: m, buf: buf}
}

// post posts send work requests.
func (ep *hEndpoint) post(wrs ...qp.SendWR) {
	ep.d.h.t.Helper()
	require.NoError(ep.d.h.t, postSend(ep.q, wrs))
}

// postRecv posts one receive WQE per SGE list.
func (ep *hEndpoint) postRecv(id uint64, sges ...mr.SGE) {
	ep.d.h.t.Helper()
	require.NoError(ep.d.h.t, ep.q.PostRecv([]qp.RecvWR{{ID: id, SGList: sges}}))
}

// pollSend returns every send completion waiting.
func (ep *hEndpoint) pollSend() []cq.WC { return hPoll(ep.scq) }

// pollRecv returns every receive completion waiting.
func (ep *hEndpoint) pollRecv() []cq.WC { return hPoll(ep.rcq) }

func hPoll(c *cq.CQ) []cq.WC {
	var all []cq.WC
	var wcs [64]cq.WC
	for {
		n := c.Poll(wcs[:])
		all = append(all, wcs[:n]...)
		if n < len(wcs) {
			return all
		}
	}
}

// step runs every engine that was woken or whose deadline has passed, then delivers one round of
// packets in flight. It reports whether anything happened.
func (h *harness) step() bool {
	busy := false
	for _, d := range h.devs {
		if d.runsAt(h.now) != h.now {
			continue
		}
		for _, e := range d.engines {
			dl := e.Deadline()
			if d.due(e) || (!dl.IsZero() && !dl.After(h.now)) {
				e.Run(h.now, &d.out)
				h.collect(d)
				busy = true
			}
		}
	}
	round := h.flight
	h.flight = nil
	for i := range round {
		p := &round[i]
		if d := h.deviceAt(p.path.Dst.Addr()); d != nil && d.stall != nil {
			// Taken in arrival order, one per service time while the process runs (below).
			p.ready = h.now
			d.inbox = append(d.inbox, *p)
			continue
		}
		if d := h.deviceAt(p.path.Dst.Addr()); d != nil && d.service > 0 {
			if d.queue > 0 && len(d.inbox) >= d.queue {
				h.stats.Overflowed++
				continue
			}
			d.busyUntil = later(h.now, d.busyUntil).Add(d.service)
			p.ready = d.busyUntil
			d.inbox = append(d.inbox, *p)
			continue
		}
		h.deliver(p)
		busy = true
	}
	for _, d := range h.devs {
		if d.stall != nil {
			// A process that runs only in slices reads its socket only then, at its own pace.
			if len(d.inbox) > 0 && d.runsAt(h.now) == h.now && !d.busyUntil.After(h.now) {
				p := d.inbox[0]
				d.inbox = d.inbox[1:]
				d.busyUntil = h.now.Add(d.service)
				h.deliver(&p)
				busy = true
			}
			continue
		}
		n := 0
		for n < len(d.inbox) && !d.inbox[n].ready.After(h.now) {
			h.deliver(&d.inbox[n])
			n++
			busy = true
		}
		d.inbox = d.inbox[n:]
	}
	return busy
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// collect takes the packets a device's engines produced, checks them and puts them in flight.
func (h *harness) collect(d *hDevice) {
	h.t.Helper()
	for _, o := range d.out.Packets {
		p := hPacket{buf: append(append(append([]byte(nil), o.Buf...), o.Payload...), o.Tail...), path: o.Env, at: h.now}
		if o.Payload != nil {
			h.stats.Views++
		}
		var parsed packet.Parsed
		require.NoError(h.t, packet.Parse(p.buf, &parsed), "engine emitted an unparsable packet")
		env := hEnvelope(&p.path)
		require.NoError(h.t, env.VerifyICRC(p.buf), "engine emitted %v with a bad ICRC", parsed.Opcode())
		require.Equal(h.t, uint16(packet.UDPPort), p.path.Dst.Port(), "destination port of the %v the engine emitted", parsed.Opcode())
		require.GreaterOrEqual(h.t, p.path.Src.Port(), uint16(0xC000), "source port of the %v the engine emitted", parsed.Opcode())
		require.Equal(h.t, hZoned(d.addr, d.zone), p.path.Src.Addr(), "source address of the %v the engine emitted", parsed.Opcode())
		h.stats.Sent++
		if h.tap != nil && !h.tap(&p, &parsed) {
			h.stats.Lost++
			continue
		}
		if h.keep {
			h.trace = append(h.trace, p)
		}
		f := h.faults
		switch {
		case f.Loss > 0 && h.rng.Float64() < f.Loss:
			h.stats.Lost++
			continue
		case f.Corrupt > 0 && h.rng.Float64() < f.Corrupt:
			h.stats.Corrupted++
			p.buf[h.rng.IntN(len(p.buf))] ^= byte(1 << h.rng.IntN(8))
		}
		if f.Dup > 0 && h.rng.Float64() < f.Dup {
			h.stats.Duplicated++
			h.flight = append(h.flight, hPacket{buf: append([]byte(nil), p.buf...), path: p.path, at: p.at})
		}
		if f.Reorder > 0 && h.rng.Float64() < f.Reorder && len(h.flight) > 0 {
			// Overtaken by the packet emitted before it.
			h.stats.Reordered++
			last := h.flight[len(h.flight)-1]
			h.flight[len(h.flight)-1] = p
			h.flight = append(h.flight, last)
			continue
		}
		h.flight = append(h.flight, p)
	}
	d.out.Reset()
	d.reported = append(d.reported, d.out.Events...)
	d.out.ResetEvents()
}

// hEnvelope is the framing a gorxe socket gives a packet on path p: IPv4 from an unconnected
// socket with DF set carries IP ID 0.
func hEnvelope(p *packet.Envelope) packet.Envelope {
	env := packet.Envelope{Src: p.Src, Dst: p.Dst, TrafficClass: p.TrafficClass, HopLimit: p.HopLimit}
	if p.Src.Addr().Is4() {
		env.IPFlags = packet.IPv4DontFragment
	}
	return env
}

// deliver hands a packet to the engine it is addressed to, as the device layer does: ICRC check,
// parse, route by address and destination QPN.
func (h *harness) deliver(p *hPacket) {
	env := hEnvelope(&p.path)
	if err := env.VerifyICRC(p.buf); err != nil {
		h.stats.CorruptDropped++
		return
	}
	var parsed packet.Parsed
	if err := packet.Parse(p.buf, &parsed); err != nil {
		h.stats.CorruptDropped++
		return
	}
	for _, d := range h.devs {
		if d.addr != p.path.Dst.Addr().WithZone("") {
			continue
		}
		e := d.engine(parsed.BTH().DestQP())
		if e == nil {
			break
		}
		h.stats.Delivered++
		from := packet.Envelope{Src: p.path.Src, Dst: p.path.Dst, TrafficClass: p.path.TrafficClass, HopLimit: p.path.HopLimit}
		from.Src = netip.AddrPortFrom(hZoned(from.Src.Addr(), d.zone), from.Src.Port())
		from.Dst = netip.AddrPortFrom(hZoned(from.Dst.Addr(), d.zone), from.Dst.Port())
		e.Receive(h.now, &parsed, from, &d.out)
		h.collect(d)
		return
	}
	h.stats.Unroutable++
}

// drain steps until nothing happens at the current time. An engine that stays busy without the
// clock moving (a deadline that never leaves the past, packets bouncing forever) fails the test.
func (h *harness) drain() {
	h.t.Helper()
	rounds := 0
	for rounds <= 20_000 && h.step() {
		rounds++
	}
	require.LessOrEqual(h.t, rounds, 20_000, "network busy without the clock moving, at %v", h.now.Sub(hStart))
}

// nextDeadline returns the earliest engine deadline, or zero.
func (h *harness) nextDeadline() time.Time {
	var next time.Time
	for _, d := range h.devs {
		for _, e := range d.engines {
			if dl := e.Deadline(); !dl.IsZero() {
				next = earliest(next, d.runsAt(later(dl, h.now)))
			}
		}
		if len(d.inbox) > 0 {
			ready := d.inbox[0].ready
			if d.stall != nil {
				ready = d.busyUntil
			}
			next = earliest(next, d.runsAt(later(ready, h.now)))
		}
	}
	return next
}

// settle runs the network until nothing is in flight and no engine has a deadline, advancing the
// clock to the next deadline whenever the network is idle. It fails the test if that takes more
// than limit of fake time.
func (h *harness) settle(limit time.Duration) {
	h.t.Helper()
	h.runUntil(func() bool { return false }, limit)
}

// runUntil runs the network until done returns true (checked whenever the network is idle),
// it is quiescent, or limit of fake time has passed. It reports whether done returned true.
func (h *harness) runUntil(done func() bool, limit time.Duration) bool {
	h.t.Helper()
	end := h.now.Add(limit)
	for {
		h.drain()
		if done() {
			return true
		}
		next := h.nextDeadline()
		if next.IsZero() {
			return false
		}
		require.False(h.t, next.After(end), "network still busy after %v of fake time (next deadline %v later)", limit, next.Sub(h.now))
		if next.After(h.now) {
			h.now = next
		}
	}
}

// advance moves the clock forward by d without running anything.
func (h *harness) advance(d time.Duration) { h.now = h.now.Add(d) }

// hPattern returns n bytes of a pattern that differs with seed and position.
func hPattern(n int, seed uint64) []byte {
	b := make([]byte, n)
	x := seed*0x9e3779b97f4a7c15 + 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = byte(x)
	}
	return b
}

// wantWC checks one completion's identity and status.
func wantWC(t *testing.T, wc cq.WC, id uint64, st cq.Status, op cq.Opcode) {
	t.Helper()
	require.Equal(t, id, wc.WRID, "WC id")
	require.Equal(t, st, wc.Status, "WC %d status", id)
	if st == cq.WCSuccess {
		require.Equal(t, op, wc.Opcode, "WC %d opcode", id)
	}
}

// netipAP pairs an address and a port.
func netipAP(a netip.Addr, port uint16) netip.AddrPort { return netip.AddrPortFrom(a, port) }

func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }

// postSend posts wrs and returns PostSend's error (the stack, not the engine, uses its idle
// result).
func postSend(q *qp.QP, wrs []qp.SendWR) error {
	_, err := q.PostSend(wrs)
	return err
}
