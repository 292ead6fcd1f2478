package cm

import (
	"net/netip"

	"github.com/gorxe/gorxe/cm/mad"
	"github.com/gorxe/gorxe/packet"
)

// DefaultHopLimit is the hop limit of a routed RoCEv2 path: the IP TTL that
// rxe sends with (64), which the kernel's RDMA-CM copies into the REQ.
const DefaultHopLimit = 64

// RDMACMPath returns the path RDMA-CM resolves for a RoCEv2 connection from
// src to dst: the addresses as GIDs (IPv4-mapped for IPv4), the port-hash
// flow label (packet.CMFlowLabel), the default hop limit, traffic class and SL 0, and the given
// active MTU.
func RDMACMPath(src, dst netip.AddrPort, mtu mad.MTU) Path {
	return Path{
		LocalGID:  src.Addr().As16(),
		RemoteGID: dst.Addr().As16(),
		FlowLabel: packet.CMFlowLabel(src.Port(), dst.Port()),
		HopLimit:  DefaultHopLimit,
		MTU:       mtu,
	}
}
