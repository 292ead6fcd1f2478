package packet

// Well-known values of the BTH, defined here once for every layer that builds or checks packets.
const (
	// DefaultPKey is the full-membership default partition key (IBTA 10.9.1.2), the only entry of
	// an rxe P_Key table and the P_Key every gorxe packet carries.
	DefaultPKey = 0xFFFF
	// PKeyMembershipMask masks off the membership bit of a P_Key: a limited member (bit 15
	// clear) of a partition is still in it.
	PKeyMembershipMask = 0x7FFF
	// MulticastQPN is the destination QP of a multicast datagram (IBTA 10.5.1.1: QP 0xFFFFFF),
	// delivered to every QP attached to the destination group.
	MulticastQPN = 0xFFFFFF
	// GRHSize is the room a UD receive buffer keeps in front of the payload for the network
	// header of the datagram: sizeof(struct ibv_grh), which on RoCEv2 holds the IPv6 header or,
	// for IPv4, 20 unused bytes and the IPv4 header (rxe's union rdma_network_hdr).
	GRHSize = 40
)
