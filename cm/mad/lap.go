package mad

import "encoding/binary"

// LAP sizes (IB_CM_LAP_PRIVATE_DATA_SIZE).
const (
	LAPSize            = DataSize
	LAPPrivateDataSize = 168
	lapRemoteQPN       = 12 // 24 bits, then RemoteCMResponseTimeout:5
	lapRemoteCMTO      = 15
	lapLocalLID        = 20
	lapRemoteLID       = 22
	lapLocalGID        = 24
	lapRemoteGID       = 40
	lapFlowLabel       = 56 // upper 20 bits
	lapTClass          = 59
	lapHopLimit        = 60
	lapRate            = 61 // low 6 bits
	lapSL              = 62 // upper 4 bits, then SubnetLocal
	lapAckTO           = 63 // upper 5 bits
	lapPrivateData     = 64
)

// LAP is a view of a LoadAlternatePath message (IBTA 12.8.1, Table 115),
// with which a connected peer proposes a new alternate path. RoCE has no
// automatic path migration, so gorxe only decodes it to answer with an APR.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                     Local Communication ID                    |  0
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                    Remote Communication ID                    |  4
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                           Reserved                            |  8
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                Remote QPN/EECN                |RemCMTO  | Rsv | 12
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                           Reserved                            | 16
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|   Alternate Local Port LID    |   Alternate Remote Port LID   | 20
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|             Alternate Local Port GID (16 bytes)               | 24
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|             Alternate Remote Port GID (16 bytes)              | 40
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|         Alternate Flow Label          | Rsvd  | Traffic Class | 56
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|   Hop Limit   |Rsv|PacketRate |  SL   |S| Rsvd|AckTimeout |Rsv| 60
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                  Private Data (168 bytes)                     | 64
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// The alternate path's fields sit in a different order from a REQ's path
// block (traffic class before hop limit and packet rate). A LAP must be at
// least [LAPSize] bytes; methods do not bound-check.
type LAP []byte

// LAPFields holds the values of a LAP for [LAP.Encode].
type LAPFields struct {
	LocalCommID             uint32
	RemoteCommID            uint32
	RemoteQPN               uint32 // 24 bits
	RemoteCMResponseTimeout uint8  // 5 bits
	AlternatePath           PathFields
	PrivateData             []byte // at most LAPPrivateDataSize bytes
}

// LocalCommID returns the "Local Communication ID" field.
func (r LAP) LocalCommID() uint32 { return localCommID(r) }

// RemoteCommID returns the "Remote Communication ID" field.
func (r LAP) RemoteCommID() uint32 { return remoteCommID(r) }

// RemoteQPN returns the 24-bit "Remote QPN/EECN" field.
func (r LAP) RemoteQPN() uint32 { return uint24(r[lapRemoteQPN:]) }

// RemoteCMResponseTimeout returns the 5-bit "Remote CM Response Timeout".
func (r LAP) RemoteCMResponseTimeout() uint8 { return r[lapRemoteCMTO] >> 3 }

// AlternatePath returns the proposed alternate path.
func (r LAP) AlternatePath() PathFields {
	f := PathFields{
		LocalLID:        binary.BigEndian.Uint16(r[lapLocalLID:]),
		RemoteLID:       binary.BigEndian.Uint16(r[lapRemoteLID:]),
		FlowLabel:       binary.BigEndian.Uint32(r[lapFlowLabel:]) >> 12,
		TrafficClass:    r[lapTClass],
		HopLimit:        r[lapHopLimit],
		PacketRate:      r[lapRate] & pathRateMask,
		SL:              r[lapSL] >> 4,
		SubnetLocal:     r[lapSL]&pathSubnetLocal != 0,
		LocalAckTimeout: r[lapAckTO] >> 3,
	}
	copy(f.LocalGID[:], r[lapLocalGID:lapLocalGID+16])
	copy(f.RemoteGID[:], r[lapRemoteGID:lapRemoteGID+16])
	return f
}

// PrivateData returns the 168-byte private-data area; it aliases r.
func (r LAP) PrivateData() []byte { return r[lapPrivateData:LAPSize:LAPSize] }

// Encode writes f into r, zeroing reserved fields. It returns
// ErrPrivateDataTooLong, writing nothing, when the private data does not fit.
func (r LAP) Encode(f *LAPFields) error {
	_ = r[LAPSize-1]
	if len(f.PrivateData) > LAPPrivateDataSize {
		return ErrPrivateDataTooLong
	}
	clear(r[:lapPrivateData])
	putCommIDs(r, f.LocalCommID, f.RemoteCommID)
	putUint24(r[lapRemoteQPN:], f.RemoteQPN)
	r[lapRemoteCMTO] = f.RemoteCMResponseTimeout << 3
	p := &f.AlternatePath
	binary.BigEndian.PutUint16(r[lapLocalLID:], p.LocalLID)
	binary.BigEndian.PutUint16(r[lapRemoteLID:], p.RemoteLID)
	copy(r[lapLocalGID:], p.LocalGID[:])
	copy(r[lapRemoteGID:], p.RemoteGID[:])
	binary.BigEndian.PutUint32(r[lapFlowLabel:], (p.FlowLabel&pathFlowLabelMask)<<12|uint32(p.TrafficClass))
	r[lapHopLimit] = p.HopLimit
	r[lapRate] = p.PacketRate & pathRateMask
	r[lapSL] = p.SL<<4 | bit(p.SubnetLocal, pathSubnetLocal)
	r[lapAckTO] = p.LocalAckTimeout << 3
	return putArea(r[lapPrivateData:LAPSize], f.PrivateData)
}

// Fields returns the decoded values of r. PrivateData aliases r.
func (r LAP) Fields() LAPFields {
	return LAPFields{
		LocalCommID:             r.LocalCommID(),
		RemoteCommID:            r.RemoteCommID(),
		RemoteQPN:               r.RemoteQPN(),
		RemoteCMResponseTimeout: r.RemoteCMResponseTimeout(),
		AlternatePath:           r.AlternatePath(),
		PrivateData:             r.PrivateData(),
	}
}
