package netio

import (
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/gorxe/gorxe/clock"
)

// DefaultQueueLen is the receive queue length of a fabric endpoint when FabricConfig.QueueLen is 0.
const DefaultQueueLen = 1024

// FabricConfig configures a [Fabric].
type FabricConfig struct {
	// Clock times delayed deliveries; nil means clock.Real. Tests use a *clock.Fake and step it.
	Clock clock.Clock
	// QueueLen bounds each endpoint's receive queue; datagrams arriving at a full queue are
	// dropped and counted. Zero means DefaultQueueLen.
	QueueLen int
	// Hold keeps every datagram in flight, even undelayed ones, until the clock's timer fires (for
	// a fake clock, the next Advance) or Step or Flush releases it. Without Hold, a datagram with
	// no delay is delivered inside Send.
	Hold bool
}

// Fabric is an in-memory network connecting any number of endpoints by address and port. Each
// datagram is copied into the receiving endpoint's queue and copied again into the receiver's
// buffer, so no memory is shared. Faults are configured per directed link with SetLinkFaults.
type Fabric struct {
	clk      clock.Clock
	queueLen int
	hold     bool
	line     *delayLine

	mu        sync.RWMutex                   // guards endpoints, groups and links
	endpoints map[netip.AddrPort]*Endpoint   // keyed by endpointKey
	groups    map[netip.AddrPort][]*Endpoint // members of each group and port; copied on write
	links     map[link]*faultLink

	undeliverable atomic.Uint64
}

// link is a directed pair of addresses.
type link struct{ src, dst netip.Addr }

// faultLink is one link's fault generator; mu serialises its draws.
type faultLink struct {
	mu     sync.Mutex
	engine *faultEngine
}

// NewFabric returns an empty fabric.
func NewFabric(cfg FabricConfig) *Fabric {
	f := &Fabric{
		clk:       cfg.Clock,
		queueLen:  cfg.QueueLen,
		hold:      cfg.Hold,
		endpoints: make(map[netip.AddrPort]*Endpoint),
		groups:    make(map[netip.AddrPort][]*Endpoint),
		links:     make(map[link]*faultLink),
	}
	if f.clk == nil {
		f.clk = clock.Real{}
	}
	if f.queueLen <= 0 {
		f.queueLen = DefaultQueueLen
	}
	f.line = newDelayLine(f.clk, f.deliverBatch)
	return f
}

// NewEndpoint attaches an endpoint listening on port (0 means DefaultPort) at each of addrs.
func (f *Fabric) NewEndpoint(port uint16, addrs ...netip.Addr) (*Endpoint, error) {
	locals, err := localAddrPorts(port, addrs)
	if err != nil {
		return nil, err
	}
	e := newEndpoint(f, locals, f.queueLen)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, l := range locals {
		if _, taken := f.endpoints[endpointKey(l)]; taken {
			return nil, fmt.Errorf("%w: %v", ErrAddressInUse, l)
		}
	}
	for _, l := range locals {
		f.endpoints[endpointKey(l)] = e
	}
	return e, nil
}

// endpointKey is the key of an endpoint's address: without its zone, since the fabric is one
// link, and a device that zones its link-local address with its link's name still receives what
// is sent to the address a GID carries, which has no zone.
func endpointKey(ap netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(ap.Addr().Unmap().WithZone(""), ap.Port())
}

// Network returns the function that attaches a device to the fabric: called with the device's
// addresses and port, it returns a new endpoint there. It has the signature of gorxe's
// Config.Network, which it is written for.
func (f *Fabric) Network() func(addrs []netip.Addr, port uint16) (Conn, error) {
	return func(addrs []netip.Addr, port uint16) (Conn, error) { return f.NewEndpoint(port, addrs...) }
}

// localAddrPorts validates a set of local addresses and pairs them with port.
func localAddrPorts(port uint16, addrs []netip.Addr) ([]netip.AddrPort, error) {
	if len(addrs) == 0 {
		return nil, ErrNoAddresses
	}
	if port == 0 {
		port = DefaultPort
	}
	locals := make([]netip.AddrPort, 0, len(addrs))
	for _, a := range addrs {
		a = a.Unmap()
		if !a.IsValid() || a.IsUnspecified() {
			return nil, fmt.Errorf("%w: %v", ErrWildcardAddress, a)
		}
		for _, l := range locals {
			if l.Addr() == a {
				return nil, fmt.Errorf("%w: %v", ErrDuplicateAddress, a)
			}
		}
		locals = append(locals, netip.AddrPortFrom(a, port))
	}
	return locals, nil
}

// SetLinkFaults impairs datagrams from src to dst (one direction) with cfg, replacing any earlier
// setting and restarting its generator from cfg.Seed. A configuration that impairs nothing removes
// the link's faults.
func (f *Fabric) SetLinkFaults(src, dst netip.Addr, cfg FaultConfig) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	k := link{src.Unmap().WithZone(""), dst.Unmap().WithZone("")}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !cfg.Enabled() {
		delete(f.links, k)
		return nil
	}
	f.links[k] = &faultLink{engine: newFaultEngine(cfg)}
	return nil
}

// LinkFaultCounters returns what the faults on the link from src to dst have done so far.
func (f *Fabric) LinkFaultCounters(src, dst netip.Addr) FaultCounters {
	f.mu.RLock()
	fl := f.links[link{src.Unmap().WithZone(""), dst.Unmap().WithZone("")}]
	f.mu.RUnlock()
	if fl == nil {
		return FaultCounters{}
	}
	return fl.engine.counters.snapshot()
}

// InFlight returns the number of datagrams sent but not yet delivered.
func (f *Fabric) InFlight() int { return f.line.len() }

// Step delivers the earliest in-flight datagram now, whatever its due time, and reports whether
// there was one.
func (f *Fabric) Step() bool { return f.line.release(1, false) == 1 }

// Flush delivers every in-flight datagram now, in due order, and returns how many.
func (f *Fabric) Flush() int {
	total := 0
	for {
		n := f.line.release(-1, false)
		if n == 0 {
			return total
		}
		total += n
	}
}

// Undeliverable counts in-flight datagrams whose destination endpoint closed before they arrived.
func (f *Fabric) Undeliverable() uint64 { return f.undeliverable.Load() }

// Close discards everything in flight. Endpoints stay open until closed themselves.
func (f *Fabric) Close() { f.line.close() }

// transmit carries one datagram from e; the caller has validated it. A datagram to a multicast
// group goes to every endpoint that joined it (the sender too, as multicast loopback does on a
// host) and to an endpoint listening on the group address itself, if any.
func (f *Fabric) transmit(from *Endpoint, m *Message, src netip.Addr) {
	dst := m.Dst.Addr().Unmap()
	f.mu.RLock()
	to := f.endpoints[endpointKey(m.Dst)]
	var members []*Endpoint
	if dst.IsMulticast() {
		members = f.groups[netip.AddrPortFrom(dst.WithZone(""), m.Dst.Port())]
	}
	var fl *faultLink
	if len(f.links) > 0 {
		fl = f.links[link{src.WithZone(""), dst.WithZone("")}]
	}
	f.mu.RUnlock()
	if to == nil && len(members) == 0 {
		from.counters.drop(DropNoRoute)
		return
	}
	if fl == nil {
		if f.hold {
			f.line.add(m, -1, 0, Sent)
		} else {
			enqueueAll(to, members, m, -1)
		}
		return
	}
	fl.mu.Lock()
	p := fl.engine.plan(len(m.Buf))
	fl.mu.Unlock()
	if p.drop {
		return
	}
	for i := 0; i < p.copies; i++ {
		if p.delay[i] > 0 || f.hold {
			f.line.add(m, p.corruptBit, p.delay[i], p.direction(i))
		} else {
			enqueueAll(to, members, m, p.corruptBit)
		}
	}
}

// enqueueAll queues m at to, if set, and at each other group member.
func enqueueAll(to *Endpoint, members []*Endpoint, m *Message, corruptBit int) {
	if to != nil {
		to.enqueue(m, corruptBit)
	}
	for _, e := range members {
		if e != to {
			e.enqueue(m, corruptBit)
		}
	}
}

// deliverBatch hands datagrams leaving the delay line to their endpoints.
func (f *Fabric) deliverBatch(batch []Message, _ []Direction) {
	for i := range batch {
		m := &batch[i]
		dst := netip.AddrPortFrom(m.Dst.Addr().Unmap(), m.Dst.Port())
		f.mu.RLock()
		to := f.endpoints[endpointKey(dst)]
		var members []*Endpoint
		if dst.Addr().IsMulticast() {
			members = f.groups[netip.AddrPortFrom(dst.Addr().WithZone(""), dst.Port())]
		}
		f.mu.RUnlock()
		if to == nil && len(members) == 0 {
			f.undeliverable.Add(1)
			continue
		}
		enqueueAll(to, members, m, -1)
	}
}

// detach removes e's addresses.
func (f *Fabric) detach(e *Endpoint) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, l := range e.locals {
		if f.endpoints[endpointKey(l)] == e {
			delete(f.endpoints, endpointKey(l))
		}
	}
	for g, m := range f.groups {
		f.setMembers(g, slices.DeleteFunc(slices.Clone(m), func(x *Endpoint) bool { return x == e }))
	}
}
