package cm

import (
	"net/netip"

	"github.com/gorxe/gorxe/cm/mad"
)

// RoCEFlowLabel returns the flow label RDMA-CM gives a RoCEv2 connection
// between two ports when the application did not choose one: a 20-bit hash
// of the source and destination ports, source × 31 + destination (the
// kernel's cma_get_roce_udp_flow_label). rping's connection in the bundled
// capture, from port 36338 to 7174, carries 0x14c54.
func RoCEFlowLabel(srcPort, dstPort uint16) uint32 {
	return (uint32(srcPort)*31 + uint32(dstPort)) & 0xFFFFF
}

// DefaultHopLimit is the hop limit of a routed RoCEv2 path: the IP TTL that
// rxe sends with (64), which the kernel's RDMA-CM copies into the REQ.
const DefaultHopLimit = 64

// RDMACMPath returns the path RDMA-CM resolves for a RoCEv2 connection from
// src to dst: the addresses as GIDs (IPv4-mapped for IPv4), the port-hash
// flow label, the default hop limit, traffic class and SL 0, and the given
// active MTU.
func RDMACMPath(src, dst netip.AddrPort, mtu mad.MTU) Path {
	return Path{
		LocalGID:  src.Addr().As16(),
		RemoteGID: dst.Addr().As16(),
		FlowLabel: RoCEFlowLabel(src.Port(), dst.Port()),
		HopLimit:  DefaultHopLimit,
		MTU:       mtu,
	}
}
