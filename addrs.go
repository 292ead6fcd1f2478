package gorxe

import (
	"fmt"
	"net"
	"net/netip"
)

// binding is what Open learns about the addresses a device is bound to.
type binding struct {
	netdev string // interface name; empty when the address is on no local interface
	mac    net.HardwareAddr
	mtu    int          // interface MTU in bytes; 0 when unknown
	addrs  []netip.Addr // addresses to listen on, in GID table order
	gids   []GIDEntry   // the port's GID table
	name   string       // default device name
}

// resolveBinding finds the interface behind cfg.Addr or cfg.Interface and lays out the GID
// table. A network supplied by the caller may use addresses no local interface has; they get a
// synthetic MAC and no MTU limit.
func resolveBinding(cfg *resolved) (*binding, error) {
	b := &binding{}
	if cfg.Interface != "" {
		ifi, err := net.InterfaceByName(cfg.Interface)
		if err != nil {
			return nil, configErr(fmt.Sprintf("Interface %q: %v", cfg.Interface, err))
		}
		addrs, err := interfaceAddrs(ifi)
		if err != nil {
			return nil, configErr(fmt.Sprintf("Interface %q: %v", cfg.Interface, err))
		}
		if len(addrs) == 0 {
			return nil, &Error{Op: "open", Err: detailErr{ErrNoAddresses, "interface " + cfg.Interface}}
		}
		b.netdev, b.mac, b.mtu, b.addrs = ifi.Name, ifi.HardwareAddr, ifi.MTU, addrs
		b.name = "gorxe_" + ifi.Name
	} else {
		a := cfg.Addr
		if ifi := interfaceOf(a); ifi != nil {
			b.netdev, b.mac, b.mtu = ifi.Name, ifi.HardwareAddr, ifi.MTU
			if a.Is6() && a.IsLinkLocalUnicast() && a.Zone() == "" {
				a = a.WithZone(ifi.Name)
			}
		}
		b.addrs = []netip.Addr{a}
		b.name = "gorxe_" + cfg.Addr.WithZone("").String()
	}
	if len(b.mac) != 6 {
		b.mac = syntheticMAC(b.addrs[0])
	}
	usable := make(map[netip.Addr]bool, len(b.addrs))
	for _, a := range b.addrs {
		usable[a.Unmap().WithZone("")] = true
	}
	plain := make([]netip.Addr, len(b.addrs))
	for i, a := range b.addrs {
		plain[i] = a.Unmap().WithZone("")
	}
	b.gids = buildGIDTable(b.netdev, b.mac, plain, usable)
	return b, nil
}

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

// activeMTU derives the port's active MTU as rxe does: the interface MTU less 80 bytes for the
// IP, UDP, BTH and ICRC overhead, rounded down to an IB MTU, at least 256 and at most 4096. An
// unknown interface MTU (a network supplied by the caller) gives 4096.
func activeMTU(ifMTU int) MTU {
	if ifMTU <= 0 {
		return MTU4096
	}
	return MTUFromBytes(ifMTU - 80)
}
