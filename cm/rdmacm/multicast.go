package rdmacm

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm/mad"
	"github.com/gorxe/gorxe/packet"
)

// Multicast on RoCE (rdma_join_multicast).
//
// On InfiniBand a join is a request to the subnet administrator. On RoCE there is none, and the
// kernel's RDMA-CM answers a join itself (cma_iboe_join_multicast): it maps the IP group to the
// multicast GID, reports the group's address vector and Q_Key in the MULTICAST_JOIN event, and
// for an IPv4 group on RoCEv2 joins the IP group on the interface (IGMP), unless the join is
// send-only. librdmacm then attaches the id's QP to the MGID, again unless send-only. JoinMulticast
// does all of that at once; the IP membership comes with the attach (see gorxe.QP.AttachMcast).
//
// The facts, as the kernel has them on RoCEv2 (cma_iboe_set_mgid, rdma_ip2gid):
//   - the MGID of an IPv4 group a.b.c.d is the IPv4-mapped GID ::ffff:a.b.c.d (RoCEv1 would use
//     ff0e::ffff:a.b.c.d); the MGID of an IPv6 group is the address itself;
//   - the Q_Key is RDMA_UDP_QKEY (0x01234567) in the UDP port space, the Q_Key librdmacm also gives
//     the id's UD QP; the P_Key is 0xFFFF, the MLID 0 and the SL 0;
//   - the hop limit of an IPv4 group on RoCEv2 is 64 (IPV6_DEFAULT_HOPLIMIT), which rxe sends as
//     the IPv4 TTL.
//
// The kernel refuses IPv6 groups on RoCEv2 (ENOTSUPP); gorxe joins them, with the same hop limit
// of 64 and MLD in place of IGMP.

// UDPQKey is the Q_Key of RDMA-CM's UDP port space (RDMA_UDP_QKEY): the Q_Key of a multicast group
// joined in it, of the UD QPs that send to it and of UD endpoints resolved with SIDR.
const UDPQKey uint32 = mad.UDPQKey

// McastHopLimit is the hop limit (IPv4 TTL) of a group joined on RoCEv2.
const McastHopLimit = 64

// ErrLeft: Leave was called on a group already left.
var ErrLeft = errors.New("rdmacm: multicast group already left")

// JoinOptions are the arguments of rdma_join_multicast_ex besides the group.
type JoinOptions struct {
	// PortSpace is the id's port space: mad.PortSpaceUDP (the default, Q_Key UDPQKey) or
	// mad.PortSpaceIPoIB (Q_Key 0, the InfiniBand group record's business).
	PortSpace mad.PortSpace
	// SendOnly joins as a send-only full member (RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER): the
	// QP is not attached and receives nothing, and no IP membership is taken.
	SendOnly bool
	// Source is the local address the group is reached from (rdma_bind_addr); zero takes the
	// device's first address of the group's family.
	Source netip.Addr
}

// Multicast is a joined group: what RDMA_CM_EVENT_MULTICAST_JOIN reports in its rdma_ud_param.
type Multicast struct {
	// Group is the IP group address.
	Group netip.Addr
	// MGID is the group's GID.
	MGID gorxe.GID
	// AH is the address vector that reaches the group: MGID as DGID, the source address's GID
	// index and the hop limit. Create an address handle from it to send.
	AH gorxe.AHAttr
	// QPN is the destination QP of a multicast send, 0xFFFFFF.
	QPN uint32
	// QKey is the group's Q_Key, the remote Q_Key of the sends.
	QKey uint32
	// SendOnly reports how the group was joined.
	SendOnly bool

	qp       *gorxe.QP
	leaveMu  sync.Mutex
	attached bool
	left     bool
}

// JoinMulticast joins qp, a UD QP of dev, to the IP multicast group (rdma_join_multicast): it maps
// group to its MGID, attaches qp unless the join is send-only, and returns the address vector
// and Q_Key that reach the group. The QP's own Q_Key should be the returned one, as librdmacm
// sets it, for the group's datagrams to be accepted. On RoCE nothing goes over the wire apart from
// the IP membership (IGMP or MLD), so ctx only bounds the call's start.
func JoinMulticast(ctx context.Context, dev *gorxe.Device, qp *gorxe.QP, group netip.Addr, opts *JoinOptions) (*Multicast, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if opts == nil {
		opts = &JoinOptions{}
	}
	group = group.WithZone("")
	if !group.Unmap().IsMulticast() {
		return nil, fmt.Errorf("%w: %v is not a multicast group", ErrAddress, group)
	}
	if qp == nil || qp.Type() != gorxe.QPTypeUD {
		return nil, fmt.Errorf("%w: multicast needs a UD QP", gorxe.ErrInvalidQPType)
	}
	mgid := MGID(group)
	src := opts.Source.Unmap()
	if !src.IsValid() {
		var ok bool
		if src, ok = sourceFor(dev, group.Unmap()); !ok {
			return nil, fmt.Errorf("%w: no local address of %v's family", ErrAddress, group)
		}
	}
	sgid := gidIndex(dev, src)
	if sgid < 0 || src.Is4() != group.Unmap().Is4() {
		return nil, fmt.Errorf("%w: %v cannot reach %v", ErrAddress, src, group)
	}
	var qkey uint32
	switch opts.PortSpace {
	case 0, mad.PortSpaceUDP:
		qkey = UDPQKey
	case mad.PortSpaceIPoIB:
	default:
		return nil, fmt.Errorf("%w: port space %v cannot join a multicast group", ErrAddress, opts.PortSpace)
	}
	m := &Multicast{
		Group: group.Unmap(), MGID: mgid, QPN: packet.MulticastQPN, QKey: qkey, SendOnly: opts.SendOnly, qp: qp,
		AH: gorxe.AHAttr{IsGlobal: true, PortNum: 1,
			GRH: gorxe.GlobalRoute{DGID: mgid, SGIDIndex: uint8(sgid), HopLimit: McastHopLimit}},
	}
	if !opts.SendOnly {
		if err := qp.AttachMcast(mgid, 0); err != nil {
			return nil, err
		}
		m.attached = true
	}
	return m, nil
}

// MGID returns the multicast GID of an IP group on RoCEv2: IPv4 groups IPv4-mapped, IPv6 groups
// as they are.
func MGID(group netip.Addr) gorxe.GID { return gorxe.GIDFromAddr(group.Unmap()) }

// Leave leaves the group (rdma_leave_multicast): the QP is detached, and the IP membership ends
// with the device's last QP in the group.
func (m *Multicast) Leave() error {
	m.leaveMu.Lock()
	defer m.leaveMu.Unlock()
	if m.left {
		return ErrLeft
	}
	m.left = true
	if m.attached {
		return m.qp.DetachMcast(m.MGID, 0)
	}
	return nil
}
