package transport

import (
	"net/netip"
	"time"

	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

// Env is the per-device environment the engines of one device share: registered memory and the
// addresses packets leave from.
type Env struct {
	Mem *mr.Table
	// SourceAddr returns the local address of a GID table index, the source of packets sent on a
	// path that names that index.
	SourceAddr func(sgidIndex uint8) (netip.Addr, bool)
	// DstPort is the UDP port packets are sent to: zero means the RoCEv2 port, 4791. Devices on
	// another port (tests beside a running kernel rxe) talk only to peers on that port too.
	DstPort uint16
	// PortMTU is the port's active MTU, the payload limit of datagram QPs, which have no path
	// MTU of their own; zero means 4096.
	PortMTU qp.MTU
}

// Route resolves an address vector into the framing of the packets sent along it, with source
// port 0 (the sending QP chooses its own): ok is false when the source GID index names no local
// address, or an address of another family than the destination's. A connected QP's path is
// resolved when Modify changes it, an address handle's once when it is created
// (qp.Config.Route).
func (d *Env) Route(av *qp.AddressVector) (p packet.Envelope, ok bool) {
	g := &av.GRH
	p = packet.Envelope{TrafficClass: g.TrafficClass, HopLimit: g.HopLimit}
	p.Dst = netipAddrPort(g.DGID, d.dstPort())
	src, ok := d.SourceAddr(g.SGIDIndex)
	if !ok {
		return p, false
	}
	p.Src = addrPort(src, 0)
	return asSent(p), p.Src.Addr().Is4() == p.Dst.Addr().Is4()
}

// dstPort returns the UDP port packets go to.
func (d *Env) dstPort() uint16 {
	if d.DstPort == 0 {
		return packet.UDPPort
	}
	return d.DstPort
}

// udMTU returns the payload limit of a datagram QP.
func (d *Env) udMTU() int {
	if d.PortMTU == 0 {
		return qp.MTU4096.Bytes()
	}
	return d.PortMTU.Bytes()
}

// Engine is the transport state of one queue pair: requester, completer and responder. It is not safe
// for concurrent use: the device layer calls one Engine's methods from one goroutine at a time.
type Engine struct {
	q    *qp.QP
	dev  *Env
	req  requester
	comp completer
	resp responder
	ctr  counter.Set // this QP's statistics; only the engine writes them
	at   snapshot    // the QP's attributes (see attrs)

	burst time.Time // time of the first ReceiveMore of a burst not yet ended, or zero
	out   *Output   // the output of the call under way, where note records events
}

// New returns the transport state for q.
func New(dev *Env, q *qp.QP) *Engine {
	e := &Engine{q: q, dev: dev}
	e.at.version, e.req.version, e.resp.version = unread, unread, unread
	e.req.init(e)
	e.comp.init(e)
	e.resp.init(e)
	return e
}

// QP returns the verbs object this engine serves.
func (e *Engine) QP() *qp.QP { return e.q }

// Counters returns the QP's statistics. The engine increments them from its caller's goroutine;
// other goroutines may read them at any time.
func (e *Engine) Counters() *counter.Set { return &e.ctr }

// Receive handles one packet addressed to this QP. from describes how it arrived: Src is the
// sender, Dst the local address. Requests go to the responder; acknowledgements and read or
// atomic responses go to the completer.
func (e *Engine) Receive(now time.Time, p *packet.Parsed, from packet.Envelope, out *Output) {
	e.out = out
	e.receive(now, p, &from, out)
	e.endBurst(now, out)
	e.out = nil
}

// ReceiveMore is Receive for a packet that another packet for this QP follows at once, as in a
// batch read from the network: what the following packets may make unnecessary waits for the
// Receive that ends the burst. An RC responder sends one positive ACK for the burst, not one per
// request that asked for it (ACKs are cumulative: one acknowledges every SEND and WRITE before
// it, and requesters, rxe's included, retire them so), and the requester sends what the burst's
// acknowledgements allow once, in one go. Until that Receive (or a Run), Deadline reports the
// work as due.
func (e *Engine) ReceiveMore(now time.Time, p *packet.Parsed, from packet.Envelope, out *Output) {
	e.out = out
	e.receive(now, p, &from, out)
	if e.burst.IsZero() {
		e.burst = now
	}
	e.out = nil
}

func (e *Engine) receive(now time.Time, p *packet.Parsed, from *packet.Envelope, out *Output) {
	e.ctr.Inc(counter.RcvdPkts)
	if p.Opcode().IsResponse() {
		e.comp.receive(now, p, from, out)
	} else {
		e.resp.receive(now, p, from, out)
	}
}

// endBurst sends what ReceiveMore put off: the responder's ACK, and the requester's packets,
// since a completed response can open the send window or release a fence.
func (e *Engine) endBurst(now time.Time, out *Output) {
	e.burst = time.Time{}
	e.resp.flushAck(out)
	e.req.run(now, out)
}

// Run does whatever is due: it applies attribute changes made through Modify, fires expired
// timers and sends posted work the windows allow. Call it after posting, after Modify and when
// the deadline has passed.
func (e *Engine) Run(now time.Time, out *Output) {
	e.out = out
	e.burst = time.Time{}
	e.resp.flushAck(out)
	e.resp.run(now, out)
	e.comp.tick(now, out)
	e.req.run(now, out)
	e.out = nil
}

// Deadline returns when Run must next be called, or the zero time if no timer is armed.
func (e *Engine) Deadline() time.Time {
	return earliest(earliest(earliest(e.req.deadline(), e.comp.deadline()), e.resp.deadline()), e.burst)
}

// completed notes in the call's output that a work completion was delivered.
func (e *Engine) completed() {
	if e.out != nil {
		e.out.Completions++
	}
}

func earliest(a, b time.Time) time.Time {
	switch {
	case a.IsZero():
		return b
	case b.IsZero() || a.Before(b):
		return a
	}
	return b
}
