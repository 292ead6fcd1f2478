// Package netdev finds what a device binds to: the network interface behind an address or a
// name, its addresses, MAC and MTU, and the GID table rxe would lay out for it.
package netdev

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
)

// ErrNoAddresses: the interface has no address a device can bind.
var ErrNoAddresses = errors.New("no usable local address")

// Binding is what a device learns about the addresses it is bound to.
type Binding struct {
	NetDev string // interface name; empty when the address is on no local interface
	MAC    net.HardwareAddr
	MTU    int          // interface MTU in bytes; 0 when unknown
	Addrs  []netip.Addr // addresses to listen on, in GID table order, link-local ones zoned
	GIDs   []GID        // the port's GID table
	Name   string       // default device name
}

// GID is one GID table entry: an address, and whether the device has a socket on it (entries it
// has none on are kept so that indices match rxe's).
type GID struct {
	Addr   netip.Addr
	Usable bool
}

// ByInterface binds to every address of the named interface, as `rdma link add ... netdev NAME`.
func ByInterface(name string) (*Binding, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return nil, err
	}
	addrs, err := interfaceAddrs(ifi)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%w: interface %s", ErrNoAddresses, name)
	}
	b := &Binding{NetDev: ifi.Name, MAC: ifi.HardwareAddr, MTU: ifi.MTU, Addrs: addrs, Name: "gorxe_" + ifi.Name}
	b.layOut()
	return b, nil
}

// ByAddr binds to one address. An address no local interface has (a supplied network's) gets a
// synthetic MAC and no MTU limit; NetDev is then empty.
func ByAddr(a netip.Addr) *Binding {
	b := &Binding{Name: "gorxe_" + a.WithZone("").String()}
	if ifi := interfaceOf(a); ifi != nil {
		b.NetDev, b.MAC, b.MTU = ifi.Name, ifi.HardwareAddr, ifi.MTU
		if a.Is6() && a.IsLinkLocalUnicast() && a.Zone() == "" {
			a = a.WithZone(ifi.Name)
		}
	}
	b.Addrs = []netip.Addr{a}
	b.layOut()
	return b
}

// NodeGUID returns the node GUID rxe derives from the MAC.
func (b *Binding) NodeGUID() uint64 { return binary.BigEndian.Uint64(eui64(b.MAC)) }

// layOut fills in a synthetic MAC if needed and the GID table.
func (b *Binding) layOut() {
	if len(b.MAC) != 6 {
		b.MAC = syntheticMAC(b.Addrs[0])
	}
	plain := make([]netip.Addr, len(b.Addrs))
	usable := make(map[netip.Addr]bool, len(b.Addrs))
	for i, a := range b.Addrs {
		plain[i] = a.Unmap().WithZone("")
		usable[plain[i]] = true
	}
	b.GIDs = GIDTable(b.MAC, plain, usable)
}

// GIDTable lays out a GID table as rxe does: index 0 the link-local address derived from the
// MAC, then the IPv4 addresses, then the remaining IPv6 addresses. usable lists the addresses the
// device has sockets on.
func GIDTable(mac net.HardwareAddr, addrs []netip.Addr, usable map[netip.Addr]bool) []GID {
	ll := LinkLocal(mac)
	table := []GID{{Addr: ll, Usable: usable[ll]}}
	for _, a := range addrs {
		if a.Is4() {
			table = append(table, GID{Addr: a, Usable: usable[a]})
		}
	}
	for _, a := range addrs {
		if a.Is6() && a != ll {
			table = append(table, GID{Addr: a, Usable: usable[a]})
		}
	}
	return table
}

// LinkLocal derives the fe80::/64 address that rxe puts at GID index 0 from a MAC address.
func LinkLocal(mac net.HardwareAddr) netip.Addr {
	var b [16]byte
	b[0], b[1] = 0xfe, 0x80
	copy(b[8:], eui64(mac))
	return netip.AddrFrom16(b)
}

// eui64 turns a 48-bit MAC into a modified EUI-64 (universal/local bit flipped), the way rxe
// derives both its node GUID and the link-local GID.
func eui64(mac net.HardwareAddr) []byte {
	m := make([]byte, 6)
	copy(m, mac)
	return []byte{m[0] ^ 0x02, m[1], m[2], 0xff, 0xfe, m[3], m[4], m[5]}
}

// syntheticMAC gives interfaces without a hardware address (loopback) a stable, locally
// administered MAC derived from the device's first address, so two devices on 127.0.0.1 and
// 127.0.0.2 still have distinct node GUIDs.
func syntheticMAC(a netip.Addr) net.HardwareAddr {
	b := a.As16()
	return net.HardwareAddr{0x02, 0x00, b[12], b[13], b[14], b[15]}
}
