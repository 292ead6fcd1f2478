package devselect

import (
	"net"
	"net/netip"
	"strconv"
)

// ZoneOf names the interface a sockaddr_in6's sin6_scope_id stands for, as the zone of a netip
// address: the interface's name, or the number itself when no interface has that index (0: no
// zone). Devices zone their link-local addresses by interface name, so addresses compare equal.
func ZoneOf(scope uint32) string {
	if scope == 0 {
		return ""
	}
	if ifi, err := net.InterfaceByIndex(int(scope)); err == nil {
		return ifi.Name
	}
	return strconv.FormatUint(uint64(scope), 10)
}

// ScopeOf is ZoneOf's inverse: the sin6_scope_id of a zone, which is an interface name or an
// index; 0 for no zone or one that names nothing.
func ScopeOf(zone string) uint32 {
	if zone == "" {
		return 0
	}
	if ifi, err := net.InterfaceByName(zone); err == nil {
		return uint32(ifi.Index)
	}
	if n, err := strconv.ParseUint(zone, 10, 32); err == nil {
		return uint32(n)
	}
	return 0
}

// SameAddr reports whether a device's address local is the address a program names: the same
// address and, for an IPv6 link-local one, the same interface, since fe80::1 on one link is not
// fe80::1 on another. The kernel's RDMA-CM reads the interface of a link-local address from
// sin6_scope_id and looks for its GID on that netdev only; a zone elsewhere carries nothing.
func SameAddr(local, a netip.Addr) bool {
	local, a = local.Unmap(), a.Unmap()
	if local.WithZone("") != a.WithZone("") {
		return false
	}
	if !a.Is6() || !a.IsLinkLocalUnicast() {
		return true
	}
	return sameZone(local.Zone(), a.Zone())
}

// sameZone reports whether two zones name one interface, each by name or by index.
func sameZone(x, y string) bool {
	return x == y || (x != "" && y != "" && ScopeOf(x) != 0 && ScopeOf(x) == ScopeOf(y))
}

// LinkLocalNeedsScope reports whether a is an IPv6 link-local address without a zone: the kernel's
// RDMA-CM refuses to bind one (EINVAL), as it names no interface.
func LinkLocalNeedsScope(a netip.Addr) bool {
	return a.Is6() && !a.Is4In6() && a.IsLinkLocalUnicast() && a.Zone() == ""
}
