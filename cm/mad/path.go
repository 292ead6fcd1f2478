package mad

import "encoding/binary"

// PathSize is the length of one path block of a REQ (primary or alternate).
const PathSize = 44

// PermissiveLID is the LID a RoCE REQ carries in both LID fields: RoCE has
// no LIDs, and the kernel's CM fills 0xFFFF (IB_LID_PERMISSIVE) when the
// path is routed (hop limit above 1).
const PermissiveLID = 0xFFFF

const (
	pathLocalLID  = 0
	pathRemoteLID = 2
	pathLocalGID  = 4
	pathRemoteGID = 20
	pathFlowLabel = 36 // upper 20 bits of a 32-bit word
	pathRate      = 39 // low 6 bits
	pathTClass    = 40
	pathHopLimit  = 41
	pathSL        = 42 // upper 4 bits, then SubnetLocal
	pathAckTO     = 43 // upper 5 bits

	pathRateMask      = 0x3F
	pathSubnetLocal   = 0x08
	pathFlowLabelMask = 0xFFFFF
)

// PathFields holds one path of a REQ (bytes 52–95 for the primary path,
// 96–139 for the alternate) or the alternate path of a LAP. On RoCE the GIDs
// are the endpoints' IP addresses (IPv4-mapped for IPv4) and the LIDs are
// [PermissiveLID].
type PathFields struct {
	LocalLID        uint16
	RemoteLID       uint16
	LocalGID        [16]byte
	RemoteGID       [16]byte
	FlowLabel       uint32 // 20 bits
	PacketRate      uint8  // 6 bits
	TrafficClass    uint8
	HopLimit        uint8
	SL              uint8 // 4 bits
	SubnetLocal     bool
	LocalAckTimeout uint8 // 5 bits: 4.096 µs × 2^n
}

// reqPath is a view of one 44-byte REQ path block:
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|        Local Port LID         |        Remote Port LID        |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                  Local Port GID (16 bytes)                    |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                  Remote Port GID (16 bytes)                   |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|              Flow Label               |   Rsvd    |PacketRate |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	| Traffic Class |   Hop Limit   |  SL   |S| Rsvd|AckTimeout |Rsv|
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// S is SubnetLocal. The low bits of the last byte are reserved in the
// primary block and hold SAP Supported (0x04) in the alternate block.
type reqPath []byte

func (p reqPath) fields() PathFields {
	f := PathFields{
		LocalLID:        binary.BigEndian.Uint16(p[pathLocalLID:]),
		RemoteLID:       binary.BigEndian.Uint16(p[pathRemoteLID:]),
		FlowLabel:       binary.BigEndian.Uint32(p[pathFlowLabel:]) >> 12,
		PacketRate:      p[pathRate] & pathRateMask,
		TrafficClass:    p[pathTClass],
		HopLimit:        p[pathHopLimit],
		SL:              p[pathSL] >> 4,
		SubnetLocal:     p[pathSL]&pathSubnetLocal != 0,
		LocalAckTimeout: p[pathAckTO] >> 3,
	}
	copy(f.LocalGID[:], p[pathLocalGID:pathLocalGID+16])
	copy(f.RemoteGID[:], p[pathRemoteGID:pathRemoteGID+16])
	return f
}

// encode writes f, keeping the low three bits of the last byte (SAP
// Supported in an alternate block), which belong to the caller.
func (p reqPath) encode(f *PathFields) {
	_ = p[PathSize-1]
	binary.BigEndian.PutUint16(p[pathLocalLID:], f.LocalLID)
	binary.BigEndian.PutUint16(p[pathRemoteLID:], f.RemoteLID)
	copy(p[pathLocalGID:], f.LocalGID[:])
	copy(p[pathRemoteGID:], f.RemoteGID[:])
	binary.BigEndian.PutUint32(p[pathFlowLabel:], (f.FlowLabel&pathFlowLabelMask)<<12|uint32(f.PacketRate&pathRateMask))
	p[pathTClass] = f.TrafficClass
	p[pathHopLimit] = f.HopLimit
	p[pathSL] = f.SL<<4 | bit(f.SubnetLocal, pathSubnetLocal)
	p[pathAckTO] = f.LocalAckTimeout<<3 | p[pathAckTO]&0x07
}
