package packet

import (
	"encoding/binary"
	"net/netip"
	"slices"
)

// Sizes and constants of the IP and UDP framing around a RoCEv2 packet.
const (
	// UDPPort is the IANA-assigned RoCEv2 UDP destination port.
	UDPPort = 4791

	IPv4HeaderSize = 20 // without options, the only form RoCEv2 uses
	IPv6HeaderSize = 40 // without extension headers
	UDPHeaderSize  = 8

	ipProtoUDP = 17

	maxIPv4Payload = 0xFFFF - IPv4HeaderSize - UDPHeaderSize // largest RoCE packet over IPv4
	maxIPv6Payload = 0xFFFF - UDPHeaderSize                  // largest RoCE packet over IPv6
)

// IPv4Flags holds the three IPv4 flag bits.
type IPv4Flags uint8

// IPv4 flag bits.
const (
	IPv4MoreFragments IPv4Flags = 1 << 0
	IPv4DontFragment  IPv4Flags = 1 << 1
	ipv4FlagsShift              = 13 // within the 16-bit flags/fragment-offset word
	ipv4FragOffMask             = 0x1FFF
)

// Envelope describes the IP and UDP headers that carry a RoCEv2 packet: what
// the ICRC covers of them and what a capture needs to reconstruct them.
//
// An IPv4 envelope is one whose addresses are IPv4 or IPv4-mapped IPv6
// (::ffff:a.b.c.d, the form RoCE GIDs take); it is sent as IPv4, as rxe does.
// Src and Dst must be of the same family.
//
// The ICRC masks TrafficClass, HopLimit, FlowLabel and UDPChecksum, so they
// matter only when headers are written out. IPID and IPFlags are covered by
// the ICRC: a sender must use the values the kernel will put on the wire
// (0 and IPv4DontFragment from an unconnected socket with path-MTU discovery
// set to "do").
type Envelope struct {
	Src, Dst     netip.AddrPort
	IPID         uint16    // IPv4 Identification
	IPFlags      IPv4Flags // IPv4 flags (DF, MF)
	TrafficClass uint8     // IPv4 TOS / IPv6 Traffic Class (DSCP and ECN)
	HopLimit     uint8     // IPv4 TTL / IPv6 Hop Limit
	FlowLabel    uint32    // IPv6 only, 20 bits
	UDPChecksum  uint16    // written as is; rxe sends 0
}

// is6 reports whether e describes IPv6 framing.
func (e *Envelope) is6() (bool, error) {
	s, d := e.Src.Addr().Unmap(), e.Dst.Addr().Unmap()
	switch {
	case s.Is4() && d.Is4():
		return false, nil
	case s.Is6() && d.Is6():
		return true, nil
	}
	return false, ErrAddressFamily
}

// HeaderLen returns the length of the IP and UDP headers of e (28 or 48), or
// 0 if its addresses are invalid.
func (e *Envelope) HeaderLen() int {
	v6, err := e.is6()
	switch {
	case err != nil:
		return 0
	case v6:
		return IPv6HeaderSize + UDPHeaderSize
	}
	return IPv4HeaderSize + UDPHeaderSize
}

// AppendHeaders appends the IP and UDP headers for a UDP payload (a RoCE
// packet) of payloadLen bytes, and returns the extended slice. The IPv4 header
// checksum is computed; the UDP checksum is e.UDPChecksum.
func (e *Envelope) AppendHeaders(dst []byte, payloadLen int) ([]byte, error) {
	v6, err := e.is6()
	if err != nil {
		return dst, err
	}
	if payloadLen < 0 || !v6 && payloadLen > maxIPv4Payload || payloadLen > maxIPv6Payload {
		return dst, ErrTooLong
	}
	start := len(dst)
	n := e.HeaderLen()
	dst = slices.Grow(dst, n)[:start+n]
	b := dst[start:]
	udpLen := uint16(UDPHeaderSize + payloadLen)
	var udp []byte
	if v6 {
		binary.BigEndian.PutUint32(b[0:], 6<<28|uint32(e.TrafficClass)<<20|e.FlowLabel&FlowLabelMask)
		binary.BigEndian.PutUint16(b[4:], udpLen)
		b[6] = ipProtoUDP
		b[7] = e.HopLimit
		s, d := e.Src.Addr().As16(), e.Dst.Addr().As16()
		copy(b[8:24], s[:])
		copy(b[24:40], d[:])
		udp = b[IPv6HeaderSize:]
	} else {
		b[0] = 0x45
		b[1] = e.TrafficClass
		binary.BigEndian.PutUint16(b[2:], IPv4HeaderSize+udpLen)
		binary.BigEndian.PutUint16(b[4:], e.IPID)
		binary.BigEndian.PutUint16(b[6:], uint16(e.IPFlags&7)<<ipv4FlagsShift)
		b[8] = e.HopLimit
		b[9] = ipProtoUDP
		b[10], b[11] = 0, 0
		s, d := e.Src.Addr().Unmap().As4(), e.Dst.Addr().Unmap().As4()
		copy(b[12:16], s[:])
		copy(b[16:20], d[:])
		binary.BigEndian.PutUint16(b[10:], ipv4HeaderChecksum(b[:IPv4HeaderSize]))
		udp = b[IPv4HeaderSize:]
	}
	binary.BigEndian.PutUint16(udp[0:], e.Src.Port())
	binary.BigEndian.PutUint16(udp[2:], e.Dst.Port())
	binary.BigEndian.PutUint16(udp[4:], udpLen)
	binary.BigEndian.PutUint16(udp[6:], e.UDPChecksum)
	return dst, nil
}

// ParseEnvelope decodes the IPv4 or IPv6 header and the UDP header at the
// start of b, and returns them with the UDP payload (normally a RoCE packet).
// Bytes after the IP datagram (such as Ethernet padding) are dropped. It
// does not check the destination port, the IPv4 header checksum or the UDP
// checksum; RoCE relies on the ICRC instead.
//
// It returns ErrTruncated, ErrBadIPHeader (other version, IPv4 options, a
// fragment, IPv6 extension headers, not UDP) or ErrBadLength.
func ParseEnvelope(b []byte) (Envelope, []byte, error) {
	var e Envelope
	if len(b) < 1 {
		return e, nil, ErrTruncated
	}
	var udp []byte
	switch b[0] >> 4 {
	case 4:
		if len(b) < IPv4HeaderSize {
			return e, nil, ErrTruncated
		}
		if b[0]&0x0F != IPv4HeaderSize/4 || b[9] != ipProtoUDP {
			return e, nil, ErrBadIPHeader
		}
		ff := binary.BigEndian.Uint16(b[6:])
		e.IPFlags = IPv4Flags(ff >> ipv4FlagsShift)
		if ff&ipv4FragOffMask != 0 || e.IPFlags&IPv4MoreFragments != 0 {
			return e, nil, ErrBadIPHeader
		}
		total := int(binary.BigEndian.Uint16(b[2:]))
		if total < IPv4HeaderSize+UDPHeaderSize {
			return e, nil, ErrBadLength
		}
		if len(b) < total {
			return e, nil, ErrTruncated
		}
		e.TrafficClass = b[1]
		e.IPID = binary.BigEndian.Uint16(b[4:])
		e.HopLimit = b[8]
		e.Src = netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[12:16])), 0)
		e.Dst = netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[16:20])), 0)
		udp = b[IPv4HeaderSize:total]
	case 6:
		if len(b) < IPv6HeaderSize {
			return e, nil, ErrTruncated
		}
		if b[6] != ipProtoUDP {
			return e, nil, ErrBadIPHeader
		}
		plen := int(binary.BigEndian.Uint16(b[4:]))
		if plen < UDPHeaderSize {
			return e, nil, ErrBadLength
		}
		if len(b) < IPv6HeaderSize+plen {
			return e, nil, ErrTruncated
		}
		w := binary.BigEndian.Uint32(b)
		e.TrafficClass = uint8(w >> 20)
		e.FlowLabel = w & FlowLabelMask
		e.HopLimit = b[7]
		e.Src = netip.AddrPortFrom(netip.AddrFrom16([16]byte(b[8:24])), 0)
		e.Dst = netip.AddrPortFrom(netip.AddrFrom16([16]byte(b[24:40])), 0)
		udp = b[IPv6HeaderSize : IPv6HeaderSize+plen]
	default:
		return e, nil, ErrBadIPHeader
	}
	if int(binary.BigEndian.Uint16(udp[4:])) != len(udp) {
		return e, nil, ErrBadLength
	}
	e.Src = netip.AddrPortFrom(e.Src.Addr(), binary.BigEndian.Uint16(udp[0:]))
	e.Dst = netip.AddrPortFrom(e.Dst.Addr(), binary.BigEndian.Uint16(udp[2:]))
	e.UDPChecksum = binary.BigEndian.Uint16(udp[6:])
	return e, udp[UDPHeaderSize:len(udp):len(udp)], nil
}

// ipv4HeaderChecksum returns the Internet checksum of an IPv4 header whose
// checksum field is zero.
func ipv4HeaderChecksum(h []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(h); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(h[i:]))
	}
	for sum > 0xFFFF {
		sum = sum>>16 + sum&0xFFFF
	}
	return ^uint16(sum)
}
