package rdmacm

import (
	"fmt"
	"math/rand/v2"
	"net/netip"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm/mad"
)

// gidIndex returns the index of addr in the device's GID table (IPv4 addresses appear IPv4-mapped),
// or -1.
func gidIndex(dev *gorxe.Device, addr netip.Addr) int {
	want := gorxe.GIDFromAddr(addr)
	for _, e := range dev.GIDTable() {
		if e.Usable && e.GID == want {
			return e.Index
		}
	}
	return -1
}

// sourceFor returns the local address a connection to dst starts from: the device's first address
// of dst's family, preferring loopback for a loopback peer and link-local for a link-local one, as
// a route lookup would.
func sourceFor(dev *gorxe.Device, dst netip.Addr) (netip.Addr, bool) {
	var first netip.Addr
	for _, ap := range dev.LocalAddrs() {
		a := ap.Addr().Unmap()
		if a.Is4() != dst.Is4() || gidIndex(dev, a) < 0 {
			continue
		}
		if a.IsLoopback() == dst.IsLoopback() && a.IsLinkLocalUnicast() == dst.IsLinkLocalUnicast() {
			return a, true
		}
		if !first.IsValid() {
			first = a
		}
	}
	return first, first.IsValid()
}

// EphemeralPort picks a source port in Linux's default ephemeral range, as binding to port 0
// would (rdma_bind_addr and rdma_resolve_addr without a port).
func EphemeralPort() uint16 {
	const lo, hi = 32768, 60999
	return uint16(lo + rand.IntN(hi-lo+1))
}

// gidAddr turns a GID back into an address (IPv4-mapped GIDs into IPv4).
func gidAddr(g [16]byte) netip.Addr { return netip.AddrFrom16(g).Unmap() }

// portMTU returns the path MTU a connection may use: the port's active MTU, capped by limit.
func portMTU(dev *gorxe.Device, limit gorxe.MTU) mad.MTU {
	mtu := gorxe.MTU4096
	if p, err := dev.QueryPort(1); err == nil {
		mtu = p.ActiveMTU
	}
	if limit != 0 {
		mtu = min(mtu, limit)
	}
	return mad.MTU(mtu)
}

// requestAddrs returns the two ends of a request from its CMA header (hdr) and the service ID's
// port. The header carries no zone: a link-local pair takes the zone of the device's own
// link-local address, the link the request came on, so the passive side's addresses name their
// interface as the active side's do.
func (a *agent) requestAddrs(hdr mad.CMAHeaderFields, port uint16) (local, peer netip.AddrPort) {
	dst, src := hdr.Dst.Unmap(), hdr.Src.Unmap()
	if dst.Is6() && dst.IsLinkLocalUnicast() {
		for _, ap := range a.dev.LocalAddrs() {
			if l := ap.Addr(); l.WithZone("") == dst {
				dst = l
				if src.Is6() && src.IsLinkLocalUnicast() {
					src = src.WithZone(l.Zone())
				}
				break
			}
		}
	}
	return netip.AddrPortFrom(dst, port), netip.AddrPortFrom(src, hdr.SrcPort)
}

// endpoints returns the two ends of an active side's connection to addr (rdma_resolve_addr):
// source's address, else the device's first address of addr's family, and source's port, else an
// ephemeral one.
func (a *agent) endpoints(addr, source netip.AddrPort) (local, peer netip.AddrPort, err error) {
	dst := addr.Addr().Unmap()
	src := source.Addr().Unmap()
	if !src.IsValid() || src.IsUnspecified() {
		var ok bool
		if src, ok = sourceFor(a.dev, dst); !ok {
			return local, peer, fmt.Errorf("dial %v: no local address of its family: %w", addr, ErrAddress)
		}
	}
	if addr.Port() == 0 || !dst.IsValid() || gidIndex(a.dev, src) < 0 || src.Is4() != dst.Is4() {
		return local, peer, fmt.Errorf("dial %v from %v: %w", addr, src, ErrAddress)
	}
	sport := source.Port()
	if sport == 0 {
		sport = EphemeralPort()
	}
	return netip.AddrPortFrom(src, sport), netip.AddrPortFrom(dst, addr.Port()), nil
}
