package dump

import (
	"encoding/binary"
	"fmt"
)

// Record is the JSON form of a Packet, one object per line in `gorxe dump
// -json`. Keys appear in field order; the objects of extension headers the
// packet does not carry are omitted. Field names follow Wireshark's
// InfiniBand dissector where it has one; feth and rdeth, which it has no
// fields for, come after the other headers.
type Record struct {
	Frame        int              `json:"frame"`
	Src          string           `json:"src"` // ip:port, [ip]:port for IPv6
	Dst          string           `json:"dst"`
	Opcode       uint8            `json:"opcode"`
	OpName       string           `json:"opname"`
	SE           bool             `json:"se"`
	MigReq       bool             `json:"migreq"`
	Pad          uint8            `json:"pad"`
	TVer         uint8            `json:"tver"`
	PKey         uint16           `json:"pkey"`
	FECN         bool             `json:"fecn"`
	BECN         bool             `json:"becn"`
	DQPN         uint32           `json:"dqpn"`
	AckReq       bool             `json:"ackreq"`
	PSN          uint32           `json:"psn"`
	RETH         *RETHRecord      `json:"reth,omitempty"`
	AETH         *AETHRecord      `json:"aeth,omitempty"`
	DETH         *DETHRecord      `json:"deth,omitempty"`
	ImmDt        *uint32          `json:"immdt,omitempty"`
	IETH         *uint32          `json:"ieth,omitempty"`
	AtomicETH    *AtomicETHRecord `json:"atomiceth,omitempty"`
	AtomicAckETH *AtomicAckRecord `json:"atomicacketh,omitempty"`
	FETH         *FETHRecord      `json:"feth,omitempty"`
	RDETH        *RDETHRecord     `json:"rdeth,omitempty"`
	PayloadLen   int              `json:"payload_len"`
	ICRC         string           `json:"icrc"` // the four trailer bytes in wire order, "0x4ca933aa"
	ICRCOK       bool             `json:"icrc_ok"`
}

// RETHRecord is the JSON form of a RETH.
type RETHRecord struct {
	VA     uint64 `json:"va"`
	RKey   uint32 `json:"rkey"`
	DMALen uint32 `json:"dmalen"`
}

// AETHRecord is the JSON form of an AETH.
type AETHRecord struct {
	Syndrome uint8  `json:"syndrome"`
	MSN      uint32 `json:"msn"`
}

// DETHRecord is the JSON form of a DETH.
type DETHRecord struct {
	QKey  uint32 `json:"qkey"`
	SrcQP uint32 `json:"srcqp"`
}

// AtomicETHRecord is the JSON form of an AtomicETH.
type AtomicETHRecord struct {
	VA      uint64 `json:"va"`
	RKey    uint32 `json:"rkey"`
	Swap    uint64 `json:"swap"` // the addend of FETCH_ADD
	Compare uint64 `json:"compare"`
}

// AtomicAckRecord is the JSON form of an AtomicAckETH.
type AtomicAckRecord struct {
	Orig uint64 `json:"orig"`
}

// FETHRecord is the JSON form of an FETH.
type FETHRecord struct {
	Placement   uint8 `json:"placement"`
	Selectivity uint8 `json:"selectivity"`
}

// RDETHRecord is the JSON form of an RDETH.
type RDETHRecord struct {
	EEContext uint32 `json:"eecontext"`
}

// Record returns the JSON form of p.
func (p *Packet) Record() Record {
	bth := &p.BTH.BTHFields
	r := Record{
		Frame:      p.Frame,
		Src:        p.Src.String(),
		Dst:        p.Dst.String(),
		Opcode:     uint8(bth.Opcode),
		OpName:     bth.Opcode.String(),
		SE:         bth.SolicitedEvent,
		MigReq:     bth.MigReq,
		Pad:        bth.PadCount,
		TVer:       bth.TransportVersion,
		PKey:       bth.PKey,
		FECN:       bth.FECN,
		BECN:       bth.BECN,
		DQPN:       bth.DestQP,
		AckReq:     bth.AckReq,
		PSN:        uint32(bth.PSN),
		PayloadLen: len(p.Payload),
		ICRC:       icrcWire(p.BTH.ICRC),
		ICRCOK:     p.ICRCErr == nil,
	}
	if h := p.RETH; h != nil {
		r.RETH = &RETHRecord{VA: h.VirtualAddress, RKey: h.RKey, DMALen: h.DMALength}
	}
	if h := p.AETH; h != nil {
		r.AETH = &AETHRecord{Syndrome: uint8(h.Syndrome), MSN: h.MSN}
	}
	if h := p.DETH; h != nil {
		r.DETH = &DETHRecord{QKey: h.QKey, SrcQP: h.SrcQP}
	}
	if h := p.ImmDt; h != nil {
		v := h.ImmediateData
		r.ImmDt = &v
	}
	if h := p.IETH; h != nil {
		v := h.RKey
		r.IETH = &v
	}
	if h := p.AtomicETH; h != nil {
		r.AtomicETH = &AtomicETHRecord{VA: h.VirtualAddress, RKey: h.RKey, Swap: h.SwapAddData, Compare: h.CompareData}
	}
	if h := p.AtomicAckETH; h != nil {
		r.AtomicAckETH = &AtomicAckRecord{Orig: h.OriginalRemoteData}
	}
	if h := p.FETH; h != nil {
		r.FETH = &FETHRecord{Placement: h.PlacementType, Selectivity: h.Selectivity}
	}
	if h := p.RDETH; h != nil {
		r.RDETH = &RDETHRecord{EEContext: h.EEContext}
	}
	return r
}

// icrcWire formats an ICRC value as its four wire bytes in order, the way
// Wireshark prints it. The wire carries the CRC little-endian.
func icrcWire(icrc uint32) string {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], icrc)
	return fmt.Sprintf("0x%08x", binary.BigEndian.Uint32(b[:]))
}
