package mad

import (
	"encoding/binary"
	"net/netip"
	"strconv"
)

// CMAHeaderSize is the length of the RDMA-CM header at the start of a REQ's
// (and a SIDR_REQ's) private data; CMAVersion its only version.
const (
	CMAHeaderSize = 36
	CMAVersion    = 0x00

	cmaVersion   = 0
	cmaIPVersion = 1
	cmaPort      = 2
	cmaSrcAddr   = 4
	cmaDstAddr   = 20
)

// CMAHeader is a view of the header RDMA-CM puts in front of the user's
// private data when it connects over IP addresses (struct cma_hdr in the
// kernel's cma.c, struct ib_connect_hdr in librdmacm):
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|  CMA Version  | IPVer | Rsvd  |          Source Port          |  0
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                Source IP Address (16 bytes)                   |  4
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|             Destination IP Address (16 bytes)                 | 20
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                user private data (up to 56 bytes in a REQ) ...| 36
//
// IPVer is 4 or 6 in the upper nibble. An IPv4 address sits in the last four
// bytes of its 16-byte field with twelve zero bytes before it (not the
// ::ffff: mapped form GIDs use). The destination port is not here: it is the
// low 16 bits of the REQ's service ID (see [ServiceID]). A CMAHeader must be
// at least [CMAHeaderSize] bytes; methods do not bound-check.
type CMAHeader []byte

// CMAHeaderFields holds the values of an RDMA-CM header.
type CMAHeaderFields struct {
	SrcPort uint16
	Src     netip.Addr
	Dst     netip.Addr
}

// Version returns the "cma_version" byte.
func (h CMAHeader) Version() uint8 { return h[cmaVersion] }

// IPVersion returns the IP version from the upper nibble (4 or 6).
func (h CMAHeader) IPVersion() uint8 { return h[cmaIPVersion] >> 4 }

// SrcPort returns the active side's source port.
func (h CMAHeader) SrcPort() uint16 { return binary.BigEndian.Uint16(h[cmaPort:]) }

// Src returns the source address, or the zero Addr when the IP version is
// neither 4 nor 6.
func (h CMAHeader) Src() netip.Addr { return h.addr(cmaSrcAddr) }

// Dst returns the destination address, or the zero Addr when the IP version
// is neither 4 nor 6.
func (h CMAHeader) Dst() netip.Addr { return h.addr(cmaDstAddr) }

func (h CMAHeader) addr(off int) netip.Addr {
	switch h.IPVersion() {
	case 4:
		return netip.AddrFrom4([4]byte(h[off+12 : off+16]))
	case 6:
		return netip.AddrFrom16([16]byte(h[off : off+16]))
	}
	return netip.Addr{}
}

// Valid reports whether h is a header this package understands: version 0
// and IP version 4 or 6.
func (h CMAHeader) Valid() bool {
	v := h.IPVersion()
	return h.Version() == CMAVersion && (v == 4 || v == 6)
}

// Fields returns the decoded values of h.
func (h CMAHeader) Fields() CMAHeaderFields {
	return CMAHeaderFields{SrcPort: h.SrcPort(), Src: h.Src(), Dst: h.Dst()}
}

// Encode writes f into h. Both addresses must be IPv4 (IPv4-mapped IPv6
// counts as IPv4, as RDMA-CM treats it) or both IPv6; otherwise it returns
// ErrAddressFamily and writes nothing.
func (h CMAHeader) Encode(f *CMAHeaderFields) error {
	_ = h[CMAHeaderSize-1]
	src, dst := f.Src.Unmap(), f.Dst.Unmap()
	if !src.IsValid() || !dst.IsValid() || src.Is4() != dst.Is4() {
		return ErrAddressFamily
	}
	clear(h[:CMAHeaderSize])
	h[cmaVersion] = CMAVersion
	binary.BigEndian.PutUint16(h[cmaPort:], f.SrcPort)
	if src.Is4() {
		h[cmaIPVersion] = 4 << 4
		s, d := src.As4(), dst.As4()
		copy(h[cmaSrcAddr+12:], s[:])
		copy(h[cmaDstAddr+12:], d[:])
		return nil
	}
	h[cmaIPVersion] = 6 << 4
	s, d := src.As16(), dst.As16()
	copy(h[cmaSrcAddr:], s[:])
	copy(h[cmaDstAddr:], d[:])
	return nil
}

// AppendCMAPrivateData returns b with an RDMA-CM header for f followed by
// the user's private data appended: the private data of an RDMA-CM REQ or
// SIDR_REQ.
func AppendCMAPrivateData(b []byte, f *CMAHeaderFields, user []byte) ([]byte, error) {
	n := len(b)
	b = append(b, make([]byte, CMAHeaderSize)...)
	if err := CMAHeader(b[n:]).Encode(f); err != nil {
		return b[:n], err
	}
	return append(b, user...), nil
}

// PortSpace is an RDMA-CM port space (enum rdma_ucm_port_space): the
// namespace of the port numbers that RDMA-CM folds into service IDs.
type PortSpace uint16

// RDMA-CM port spaces.
const (
	PortSpaceIPoIB PortSpace = 0x0002
	PortSpaceTCP   PortSpace = 0x0106 // RC connections: rping, perftest -R
	PortSpaceUDP   PortSpace = 0x0111 // UD: udaddy, resolved with SIDR
	PortSpaceIB    PortSpace = 0x013F
)

func (ps PortSpace) String() string {
	switch ps {
	case PortSpaceIPoIB:
		return "IPoIB"
	case PortSpaceTCP:
		return "TCP"
	case PortSpaceUDP:
		return "UDP"
	case PortSpaceIB:
		return "IB"
	}
	return "PortSpace(0x" + strconv.FormatUint(uint64(ps), 16) + ")"
}

// UDPQKey is the Q_Key RDMA-CM uses for UD QPs in the UDP and IPoIB port
// spaces (RDMA_UDP_QKEY).
const UDPQKey = 0x01234567

// ServiceID returns the service ID RDMA-CM listens on and connects to for a
// port in a port space: the port space in bits 31–16 and the port in bits
// 15–0 (rdma_get_service_id). rping's default port 7174 in the TCP space is
// 0x0000000001061C06.
func ServiceID(ps PortSpace, port uint16) uint64 { return uint64(ps)<<16 | uint64(port) }

// SplitServiceID returns the port space and port of an RDMA-CM service ID;
// ok is false when the upper 32 bits are not zero (a native IB service ID).
func SplitServiceID(id uint64) (ps PortSpace, port uint16, ok bool) {
	if id>>32 != 0 {
		return 0, 0, false
	}
	return PortSpace(id >> 16), uint16(id), true
}

// SplitCMAPrivateData splits the private data of an RDMA-CM REQ or
// SIDR_REQ into its header and the user's bytes (the rest of the area,
// zero-padded: the wire does not carry the user's length). ok is false when
// the data is too short or the header is not one RDMA-CM sends.
func SplitCMAPrivateData(pd []byte) (h CMAHeaderFields, user []byte, ok bool) {
	if len(pd) < CMAHeaderSize || !CMAHeader(pd).Valid() {
		return CMAHeaderFields{}, nil, false
	}
	return CMAHeader(pd).Fields(), pd[CMAHeaderSize:], true
}
