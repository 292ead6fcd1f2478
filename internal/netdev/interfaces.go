package netdev

import (
	"net"
	"net/netip"
)

// interfaceAddrs returns the unicast addresses of ifi a device can bind, IPv6 link-local ones
// with their zone.
func interfaceAddrs(ifi *net.Interface) ([]netip.Addr, error) {
	list, err := ifi.Addrs()
	if err != nil {
		return nil, err
	}
	var out []netip.Addr
	for _, a := range list {
		pfx, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip, ok := netip.AddrFromSlice(pfx.IP)
		if !ok {
			continue
		}
		ip = ip.Unmap()
		if ip.IsUnspecified() || ip.IsMulticast() {
			continue
		}
		if ip.Is6() && ip.IsLinkLocalUnicast() {
			ip = ip.WithZone(ifi.Name)
		}
		out = append(out, ip)
	}
	return out, nil
}

// interfaceOf returns the interface holding a, or the loopback interface for any address of a
// loopback prefix (Linux answers for all of 127.0.0.0/8 on lo), or nil.
func interfaceOf(a netip.Addr) *net.Interface {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil
	}
	a = a.Unmap().WithZone("")
	var loop *net.Interface
	for i := range ifs {
		ifi := &ifs[i]
		addrs, err := ifi.Addrs()
		if err != nil {
			continue
		}
		for _, x := range addrs {
			pfx, ok := x.(*net.IPNet)
			if !ok {
				continue
			}
			ip, ok := netip.AddrFromSlice(pfx.IP)
			if !ok {
				continue
			}
			if ip.Unmap() == a {
				return ifi
			}
			ones, _ := pfx.Mask.Size()
			if p, err := ip.Unmap().Prefix(ones); err == nil && ifi.Flags&net.FlagLoopback != 0 && p.Contains(a) {
				loop = ifi
			}
		}
	}
	return loop
}

// Index returns the index of the interface holding a (see interfaceOf), or 0 when no local
// interface has it. A zoned IPv6 address names its interface itself.
func Index(a netip.Addr) int {
	if z := a.Zone(); z != "" {
		if ifi, err := net.InterfaceByName(z); err == nil {
			return ifi.Index
		}
	}
	if ifi := interfaceOf(a); ifi != nil {
		return ifi.Index
	}
	return 0
}
