package layers

import (
	"net/netip"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/gorxe/gorxe/packet"
)

// Envelope returns the framing of the RoCEv2 packet carried by ip (an
// *layers.IPv4 or *layers.IPv6) and udp, as the packet package needs it to
// compute or verify the ICRC. It returns ErrNoNetworkLayer if either is
// missing or ip is of another type, and packet.ErrAddressFamily if an address
// does not fit its IP version.
func Envelope(ip gopacket.NetworkLayer, udp *gplayers.UDP) (packet.Envelope, error) {
	var e packet.Envelope
	if udp == nil {
		return e, ErrNoNetworkLayer
	}
	var src, dst netip.Addr
	var ok1, ok2 bool
	switch ip := ip.(type) {
	case *gplayers.IPv4:
		src, ok1 = netip.AddrFromSlice(ip.SrcIP.To4())
		dst, ok2 = netip.AddrFromSlice(ip.DstIP.To4())
		e.IPID = ip.Id
		if ip.Flags&gplayers.IPv4DontFragment != 0 {
			e.IPFlags |= packet.IPv4DontFragment
		}
		if ip.Flags&gplayers.IPv4MoreFragments != 0 {
			e.IPFlags |= packet.IPv4MoreFragments
		}
		e.TrafficClass, e.HopLimit = ip.TOS, ip.TTL
	case *gplayers.IPv6:
		src, ok1 = netip.AddrFromSlice(ip.SrcIP.To16())
		dst, ok2 = netip.AddrFromSlice(ip.DstIP.To16())
		e.TrafficClass, e.HopLimit, e.FlowLabel = ip.TrafficClass, ip.HopLimit, ip.FlowLabel
	default:
		return e, ErrNoNetworkLayer
	}
	if !ok1 || !ok2 {
		return e, packet.ErrAddressFamily
	}
	e.Src = netip.AddrPortFrom(src, uint16(udp.SrcPort))
	e.Dst = netip.AddrPortFrom(dst, uint16(udp.DstPort))
	e.UDPChecksum = udp.Checksum
	return e, nil
}

// VerifyICRC checks the ICRC of the RoCEv2 packet in udp's payload against
// the IP and UDP headers it arrived with. It returns nil, packet.ErrBadICRC,
// or an error of Envelope or packet.Envelope.VerifyICRC. Because a decoded
// IPv4 layer carries the Identification field, the check is exact (all 32
// bits), unlike packet.VerifyICRCIPv4AnyID on a socket.
func VerifyICRC(ip gopacket.NetworkLayer, udp *gplayers.UDP) error {
	e, err := Envelope(ip, udp)
	if err != nil {
		return err
	}
	return e.VerifyICRC(udp.Payload)
}
