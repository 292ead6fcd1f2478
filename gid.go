package gorxe

import (
	"encoding/binary"
	"fmt"
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
