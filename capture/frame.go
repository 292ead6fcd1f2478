package capture

import (
	"encoding/binary"
	"net/netip"

	"github.com/gorxe/gorxe/netio"
	"github.com/gorxe/gorxe/packet"
)

// Ethernet framing of a captured datagram.
const (
	ethHeaderSize = 14
	etherTypeIPv4 = 0x0800
	etherTypeIPv6 = 0x86DD

	// maxFrameTail is the longest frame after the Ethernet header: IPv6, UDP and the largest
	// RoCEv2 packet (4096 bytes of payload, the largest header set, the ICRC).
	maxFrameTail = packet.IPv6HeaderSize + packet.UDPHeaderSize + 4096 + 64
)

// appendFrame appends m as an Ethernet frame to dst: MACs derived from the IP addresses (a UDP
// socket never learns the real ones), the IP and UDP headers (IPv4: DF, ID 0 for what gorxe
// sends, the ID the ICRC was computed with for what it received; UDP checksum 0, which IPv4
// allows; IPv6: a real UDP checksum, which IPv6 requires), then the RoCEv2 packet with its ICRC.
func appendFrame(dst []byte, m *netio.Message, received bool) ([]byte, error) {
	env := packet.Envelope{Src: m.Src, Dst: m.Dst, TrafficClass: m.TOS, HopLimit: m.TTL}
	v4 := m.Src.Addr().Unmap().Is4()
	if v4 {
		env.IPFlags = packet.IPv4DontFragment
		if received {
			// A socket does not say which IPv4 ID a datagram came with, and the ICRC covers it:
			// a segmented send numbers its datagrams 0, 1, 2, ..., kernel rxe counts up. The
			// ICRC itself tells (packet.VerifyICRCIPv4AnyID); a packet whose ICRC no ID fits
			// keeps ID 0 and shows as bad.
			if id, flags, err := packet.VerifyICRCIPv4AnyID(m.Src, m.Dst, m.Buf); err == nil {
				env.IPID, env.IPFlags = id, flags
			}
		}
	}
	if env.HopLimit == 0 {
		env.HopLimit = 64 // a UDP socket does not report the TTL of what it sends
	}
	etherType := uint16(etherTypeIPv6)
	if v4 {
		etherType = etherTypeIPv4
	}
	dst = appendMAC(dst, m.Dst.Addr())
	dst = appendMAC(dst, m.Src.Addr())
	dst = binary.BigEndian.AppendUint16(dst, etherType)
	ipStart := len(dst)
	dst, err := env.AppendHeaders(dst, len(m.Buf))
	if err != nil {
		return dst, err
	}
	udpStart := len(dst) - packet.UDPHeaderSize
	dst = append(dst, m.Buf...)
	if !v4 {
		sum := udp6Checksum(dst[ipStart+8:ipStart+24], dst[ipStart+24:ipStart+40], dst[udpStart:])
		binary.BigEndian.PutUint16(dst[udpStart+6:], sum)
	}
	return dst, nil
}

// appendMAC appends a locally administered unicast MAC derived from a, so each endpoint keeps
// one MAC across the capture.
func appendMAC(dst []byte, a netip.Addr) []byte {
	var mac [6]byte
	b := a.Unmap().AsSlice() // 4 or 16 bytes (none for the zero Addr)
	if len(b) > 5 {
		b = b[len(b)-5:]
	}
	copy(mac[6-len(b):], b)
	mac[0] = 0x02 // locally administered, unicast
	return append(dst, mac[:]...)
}

// udp6Checksum returns the UDP checksum of seg (header with a zero checksum field, then payload)
// carried over IPv6 from src to dst (RFC 8200 §8.1).
func udp6Checksum(src, dst, seg []byte) uint16 {
	var sum uint32
	add := func(b []byte) {
		for len(b) >= 2 {
			sum += uint32(b[0])<<8 | uint32(b[1])
			b = b[2:]
		}
		if len(b) == 1 {
			sum += uint32(b[0]) << 8
		}
	}
	add(src)
	add(dst)
	sum += uint32(len(seg)) + 17 // upper-layer length and next header (UDP)
	add(seg)
	for sum > 0xFFFF {
		sum = sum>>16 + sum&0xFFFF
	}
	c := ^uint16(sum)
	if c == 0 {
		return 0xFFFF // zero means "no checksum", which IPv6 forbids
	}
	return c
}
