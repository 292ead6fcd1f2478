package rdmacm

import (
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

// ephemeralPort picks a source port in Linux's default ephemeral range, as binding to port 0 would.
func ephemeralPort() uint16 {
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

// addrPort builds an address and port, unmapping IPv4-mapped addresses.
func addrPort(a netip.Addr, port uint16) netip.AddrPort { return netip.AddrPortFrom(a.Unmap(), port) }
