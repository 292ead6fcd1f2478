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
// UD's, whose DETH names it). The sender of A→B addressed to QP x is the QP that B's packets
// back to A on the same UDP source port address; failing that, the only QP B's packets to A
// address at all. Otherwise the sender stays unknown.
func resolveEndpoints(pkts []Packet) {
	byPort := map[flowKey]*qpnSet{}
	byAddr := map[flowKey]*qpnSet{} // port 0: any port
	note := func(m map[flowKey]*qpnSet, k flowKey, q uint32) {
		s := m[k]
		if s == nil {
			s = &qpnSet{}
			m[k] = s
		}
		s.add(q)
	}
	for i := range pkts {
		p := &pkts[i]
		if !connected(p.Opcode) {
			continue
		}
		note(byPort, flowKey{p.Src.Addr, p.Dst.Addr, p.SrcPort}, p.Dst.QPN)
		note(byAddr, flowKey{p.Src.Addr, p.Dst.Addr, 0}, p.Dst.QPN)
	}
	for i := range pkts {
		p := &pkts[i]
		if p.Src.Known {
			continue
		}
		for _, s := range []*qpnSet{byPort[flowKey{p.Dst.Addr, p.Src.Addr, p.SrcPort}], byAddr[flowKey{p.Dst.Addr, p.Src.Addr, 0}]} {
			if s != nil && s.n == 1 {
				p.Src.QPN, p.Src.Known = s.qpn, true
				break
			}
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
