package trace

import (
	"fmt"
	"net/netip"

	"github.com/gorxe/gorxe/packet"
)

// Endpoint is one vertical line of the ladder: a queue pair at an IP address.
type Endpoint struct {
	Addr  netip.Addr
	QPN   uint32
	Known bool // false when the QPN could not be inferred (a sender with no reply in the capture)
}

// String returns "10.99.0.2 QP 0x000011", or "10.99.0.2 QP ?" when the QPN is unknown.
func (e Endpoint) String() string {
	if !e.Known {
		return e.Addr.String() + " QP ?"
	}
	return fmt.Sprintf("%v QP 0x%06x", e.Addr, e.QPN)
}

// flowKey names one direction of a connection on the wire. Both ends of an RC or UC connection
// send from the same UDP source port (the kernel hashes the product of the two QPNs into it, or
// the connection manager's flow label), so the two directions share the port.
type flowKey struct {
	from, to netip.Addr
	port     uint16
}

// qpnSet collects the distinct QPNs a direction addresses, stopping at two: only a unique one
// identifies the peer.
type qpnSet struct {
	qpn uint32
	n   int // 0, 1 or 2 (two or more)
}

func (s *qpnSet) add(q uint32) {
	switch {
	case s.n == 0:
		s.qpn, s.n = q, 1
	case s.n == 1 && s.qpn != q:
		s.n = 2
	}
}

// resolveEndpoints fills in the sender QPN of every packet that does not carry it (all but
// UD's, whose DETH names it). The sender of A→B addressed to QP x is, in order:
//
//   - the QP that B's packets back to A on the same UDP source port address, when there is
//     exactly one (both ends of a connection send from one port);
//   - the one QP known at A (addressed by some packet, or naming itself in a DETH) whose
//     product with x hashes to the packet's source port, as the kernel chooses it.
//
// Otherwise the sender stays unknown: a guess would draw the packet on the wrong line.
func resolveEndpoints(pkts []Packet) {
	back := map[flowKey]*qpnSet{}
	known := map[netip.Addr]map[uint32]bool{}
	for i := range pkts {
		p := &pkts[i]
		for _, e := range []Endpoint{p.Src, p.Dst} {
			if e.Known {
				if known[e.Addr] == nil {
					known[e.Addr] = map[uint32]bool{}
				}
				known[e.Addr][e.QPN] = true
			}
		}
		if !connected(p.Opcode) {
			continue
		}
		k := flowKey{p.Src.Addr, p.Dst.Addr, p.SrcPort}
		if back[k] == nil {
			back[k] = &qpnSet{}
		}
		back[k].add(p.Dst.QPN)
	}
	for i := range pkts {
		p := &pkts[i]
		if p.Src.Known {
			continue
		}
		if s := back[flowKey{p.Dst.Addr, p.Src.Addr, p.SrcPort}]; s != nil && s.n == 1 {
			p.Src.QPN, p.Src.Known = s.qpn, true
			continue
		}
		var match qpnSet
		for q := range known[p.Src.Addr] {
			if packet.UDPSourcePort(0, q, p.Dst.QPN) == p.SrcPort {
				match.add(q)
			}
		}
		if match.n == 1 {
			p.Src.QPN, p.Src.Known = match.qpn, true
		}
	}
}

// connected reports whether op belongs to a connected transport, whose packets do not name
// their sender.
func connected(op packet.Opcode) bool {
	t := op.Transport()
	return t == packet.TransportRC || t == packet.TransportUC || t == packet.TransportCNP
}

// lanes returns the endpoints in the order they first appear, a packet's sender before its
// receiver, so the two ends of a connection stand side by side.
func lanes(pkts []Packet) []Endpoint {
	seen := map[Endpoint]bool{}
	var out []Endpoint
	for i := range pkts {
		for _, e := range []Endpoint{pkts[i].Src, pkts[i].Dst} {
			if !seen[e] {
				seen[e] = true
				out = append(out, e)
			}
		}
	}
	return out
}
