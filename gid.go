package gorxe

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
)

// GID is a 128-bit InfiniBand global identifier. On RoCEv2 it is an IPv6 address, with IPv4
// addresses carried IPv4-mapped (::ffff:a.b.c.d), exactly as rxe fills its GID table.
type GID [16]byte

// GIDFromAddr returns the RoCEv2 GID of an IP address (IPv4 addresses are IPv4-mapped).
func GIDFromAddr(a netip.Addr) GID { return GID(a.As16()) }

// Addr returns the IP address the GID stands for; IPv4-mapped GIDs give IPv4 addresses.
func (g GID) Addr() netip.Addr { return netip.AddrFrom16(g).Unmap() }

// IsZero reports whether every byte of the GID is zero (the "no GRH" GID of the pingpong tools).
func (g GID) IsZero() bool { return g == GID{} }

// String prints the GID as libibverbs tools do: eight groups of four hex digits.
func (g GID) String() string {
	return fmt.Sprintf("%04x:%04x:%04x:%04x:%04x:%04x:%04x:%04x",
		binary.BigEndian.Uint16(g[0:]), binary.BigEndian.Uint16(g[2:]),
		binary.BigEndian.Uint16(g[4:]), binary.BigEndian.Uint16(g[6:]),
		binary.BigEndian.Uint16(g[8:]), binary.BigEndian.Uint16(g[10:]),
		binary.BigEndian.Uint16(g[12:]), binary.BigEndian.Uint16(g[14:]))
}

// GIDType names the kind of a GID table entry. gorxe, like rxe, populates only RoCEv2 entries.
type GIDType uint8

// GID types, as libibverbs' enum ibv_gid_type.
const (
	GIDTypeIB     GIDType = 0
	GIDTypeRoCEv1 GIDType = 1
	GIDTypeRoCEv2 GIDType = 2
)

// String returns the name ibv_gid_type_str gives ("IB", "RoCE v1", "RoCE v2").
func (t GIDType) String() string {
	switch t {
	case GIDTypeIB:
		return "IB"
	case GIDTypeRoCEv1:
		return "RoCE v1"
	case GIDTypeRoCEv2:
		return "RoCE v2"
	}
	return "unknown"
}

// GIDEntry is one row of a port's GID table, like struct ibv_gid_entry.
type GIDEntry struct {
	Index   int
	GID     GID
	Type    GIDType
	NetDev  string // interface name, empty when the device was bound to bare addresses
	Usable  bool   // false for entries kept only so indices match rxe's layout
	PortNum uint8
}

// eui64LinkLocal derives the fe80::/64 address that rxe puts at GID index 0 from a MAC address.
func eui64LinkLocal(mac net.HardwareAddr) netip.Addr {
	var b [16]byte
	b[0], b[1] = 0xfe, 0x80
	copy(b[8:], nodeGUIDBytes(mac))
	return netip.AddrFrom16(b)
}

// nodeGUIDBytes turns a 48-bit MAC into a modified EUI-64 (universal/local bit flipped), the way
// rxe derives both its node GUID and the link-local GID.
func nodeGUIDBytes(mac net.HardwareAddr) []byte {
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

// buildGIDTable lays out a GID table as rxe does: index 0 the link-local address derived from the
// MAC, then IPv4-mapped addresses, then the remaining IPv6 addresses. usable lists the addresses the
// device actually has sockets on.
func buildGIDTable(netdev string, mac net.HardwareAddr, addrs []netip.Addr, usable map[netip.Addr]bool) []GIDEntry {
	ll := eui64LinkLocal(mac)
	table := []GIDEntry{{GID: GIDFromAddr(ll), Usable: usable[ll]}}
	for _, a := range addrs {
		if a.Is4() {
			table = append(table, GIDEntry{GID: GIDFromAddr(a), Usable: usable[a]})
		}
	}
	for _, a := range addrs {
		if a.Is6() && a != ll {
			table = append(table, GIDEntry{GID: GIDFromAddr(a), Usable: usable[a]})
		}
	}
	for i := range table {
		table[i].Index = i
		table[i].Type = GIDTypeRoCEv2
		table[i].NetDev = netdev
		table[i].PortNum = 1
	}
	return table
}
