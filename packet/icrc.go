package packet

import (
	"encoding/binary"
	"hash/crc32"
)

// The ICRC (IBTA annex A17.3.3 for RoCEv2) is the standard CRC-32 (IEEE
// 802.3, reflected, as hash/crc32's IEEE table) over
//
//	0xFF x 8 || IP header || UDP header || BTH || rest of packet || pad
//
// with the fields that routers and switches may rewrite set to all ones:
// IPv4 TOS, TTL and header checksum; IPv6 traffic class, flow label and hop
// limit; the UDP checksum; and the BTH byte holding FECN, BECN and the
// reserved bits. The eight 0xFF bytes stand for the InfiniBand LRH that
// RoCE does not carry. The result is stored little-endian, like an Ethernet
// FCS.
//
// Everything the ICRC needs from the IP and UDP headers is in an Envelope,
// so a sender that never sees those headers (they are built by the kernel)
// computes it from the addresses it sends with.

// crcOfFFx8 is the IEEE CRC-32 of eight 0xFF bytes. Continuing from it with
// crc32.Update equals starting the CRC over the masked-LRH prefix.
const crcOfFFx8 = 0x2144DF1C

// maxPseudoHeader is the largest masked prefix: IPv6, UDP and BTH.
const maxPseudoHeader = IPv6HeaderSize + UDPHeaderSize + BTHSize

// ICRC returns the invariant CRC of pkt, a whole RoCE packet (BTH to ICRC,
// the UDP payload) sent with the framing e. The packet's own last four bytes
// (the ICRC field) are not covered. It returns ErrTruncated if pkt is shorter
// than a BTH and an ICRC, ErrAddressFamily or ErrTooLong for framing that
// cannot carry it. It does not allocate and reads pkt once.
func (e *Envelope) ICRC(pkt []byte) (uint32, error) {
	return e.icrc(pkt, e.IPID, e.IPFlags)
}

// PutICRC computes the ICRC of pkt (see [Envelope.ICRC]) and stores it, little-
// endian, in the last four bytes of pkt.
func (e *Envelope) PutICRC(pkt []byte) error {
	c, err := e.icrc(pkt, e.IPID, e.IPFlags)
	if err != nil {
		return err
	}
	binary.LittleEndian.PutUint32(pkt[len(pkt)-ICRCSize:], c)
	return nil
}

// VerifyICRC reports whether the ICRC carried in the last four bytes of pkt
// matches the packet as sent with the framing e, returning nil or
// ErrBadICRC (or an error of [Envelope.ICRC]).
//
// For IPv4 this needs the IP Identification and flags the packet was sent
// with. A receiver on a UDP socket cannot see them; see
// [VerifyICRCIPv4AnyID].
func (e *Envelope) VerifyICRC(pkt []byte) error {
	c, err := e.icrc(pkt, e.IPID, e.IPFlags)
	if err != nil {
		return err
	}
	if c != binary.LittleEndian.Uint32(pkt[len(pkt)-ICRCSize:]) {
		return ErrBadICRC
	}
	return nil
}

// PutICRCParts is PutICRC for a packet held in three pieces that a vectored send joins on the
// wire: head (the BTH and extension headers), payload, and tail (the pad bytes and the ICRC),
// so that the payload can stay where it is (in registered memory) instead of being copied next to
// its headers. It stores the ICRC, little-endian, in the last four bytes of tail.
func (e *Envelope) PutICRCParts(head, payload, tail []byte) error {
	if len(head) < BTHSize || len(tail) < ICRCSize {
		return ErrTruncated
	}
	var ph [maxPseudoHeader]byte
	n, err := e.pseudoHeader(&ph, head, len(head)+len(payload)+len(tail), e.IPID, e.IPFlags)
	if err != nil {
		return err
	}
	c := updateSmall(crcOfFFx8, ph[:n])
	c = crc32.Update(c, crc32.IEEETable, head[BTHSize:])
	c = crc32.Update(c, crc32.IEEETable, payload)
	c = crc32.Update(c, crc32.IEEETable, tail[:len(tail)-ICRCSize])
	binary.LittleEndian.PutUint32(tail[len(tail)-ICRCSize:], c)
	return nil
}

// icrc computes the ICRC of pkt under e with the given IPv4 ID and flags.
func (e *Envelope) icrc(pkt []byte, id uint16, flags IPv4Flags) (uint32, error) {
	if len(pkt) < MinSize {
		return 0, ErrTruncated
	}
	var ph [maxPseudoHeader]byte
	n, err := e.pseudoHeader(&ph, pkt, len(pkt), id, flags)
	if err != nil {
		return 0, err
	}
	c := updateSmall(crcOfFFx8, ph[:n])
	return crc32.Update(c, crc32.IEEETable, pkt[BTHSize:len(pkt)-ICRCSize]), nil
}

// crcSlicing8 holds the slicing-by-8 tables of the IEEE CRC-32: entry [k][v]
// is the register contribution of byte v followed by k zero bytes.
var crcSlicing8 = func() *[8][256]uint32 {
	var t [8][256]uint32
	for v := range 256 {
		t[0][v] = crc32.IEEETable[v]
	}
	for k := 1; k < 8; k++ {
		for v := range 256 {
			p := t[k-1][v]
			t[k][v] = t[0][byte(p)] ^ p>>8
		}
	}
	return &t
}()

// updateSmall continues the IEEE CRC-32 crc over p, like crc32.Update. It
// exists because the pseudo-header lives on the stack, and crc32.Update
// reaches its assembly through a function variable, which makes any slice
// passed to it escape to the heap: one allocation per packet. For the 40 or
// 60 bytes of a pseudo-header, slicing-by-8 is about as fast anyway.
func updateSmall(crc uint32, p []byte) uint32 {
	t := crcSlicing8
	crc = ^crc
	for len(p) >= 8 {
		crc ^= binary.LittleEndian.Uint32(p)
		crc = t[7][byte(crc)] ^ t[6][byte(crc>>8)] ^ t[5][byte(crc>>16)] ^ t[4][crc>>24] ^
			t[3][p[4]] ^ t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]]
		p = p[8:]
	}
	for _, b := range p {
		crc = t[0][byte(crc)^b] ^ crc>>8
	}
	return ^crc
}

// pseudoHeader writes the masked IP header, UDP header and BTH of a packet of
// length size (BTH to ICRC) whose BTH starts pkt into ph and returns their
// length.
func (e *Envelope) pseudoHeader(ph *[maxPseudoHeader]byte, pkt []byte, size int, id uint16, flags IPv4Flags) (int, error) {
	v6, err := e.is6()
	if err != nil {
		return 0, err
	}
	var udp []byte
	var n int
	if v6 {
		if size > maxIPv6Payload {
			return 0, ErrTooLong
		}
		// Version 6, then traffic class and flow label masked.
		ph[0], ph[1], ph[2], ph[3] = 0x6F, 0xFF, 0xFF, 0xFF
		binary.BigEndian.PutUint16(ph[4:], uint16(UDPHeaderSize+size))
		ph[6] = ipProtoUDP
		ph[7] = 0xFF // hop limit
		s, d := e.Src.Addr().As16(), e.Dst.Addr().As16()
		copy(ph[8:24], s[:])
		copy(ph[24:40], d[:])
		udp, n = ph[IPv6HeaderSize:], IPv6HeaderSize
	} else {
		if size > maxIPv4Payload {
			return 0, ErrTooLong
		}
		ph[0] = 0x45
		ph[1] = 0xFF // TOS
		binary.BigEndian.PutUint16(ph[2:], uint16(IPv4HeaderSize+UDPHeaderSize+size))
		binary.BigEndian.PutUint16(ph[4:], id)
		binary.BigEndian.PutUint16(ph[6:], uint16(flags&7)<<ipv4FlagsShift)
		ph[8] = 0xFF // TTL
		ph[9] = ipProtoUDP
		ph[10], ph[11] = 0xFF, 0xFF // header checksum
		s, d := e.Src.Addr().Unmap().As4(), e.Dst.Addr().Unmap().As4()
		copy(ph[12:16], s[:])
		copy(ph[16:20], d[:])
		udp, n = ph[IPv4HeaderSize:], IPv4HeaderSize
	}
	binary.BigEndian.PutUint16(udp[0:], e.Src.Port())
	binary.BigEndian.PutUint16(udp[2:], e.Dst.Port())
	binary.BigEndian.PutUint16(udp[4:], uint16(UDPHeaderSize+size))
	udp[6], udp[7] = 0xFF, 0xFF // checksum
	bth := udp[UDPHeaderSize : UDPHeaderSize+BTHSize]
	copy(bth, pkt[:BTHSize])
	bth[bthECN] = 0xFF // FECN, BECN, reserved
	return n + UDPHeaderSize + BTHSize, nil
}
