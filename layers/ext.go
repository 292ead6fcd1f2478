package layers

import (
	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/gorxe/gorxe/packet"
)

// extBase is what every extension header layer shares: contents and payload,
// and how to find the next layer, which only the BTH's opcode tells.
type extBase struct {
	gplayers.BaseLayer

	// bth is the BTH layer of the same packet, decoded before this one, when
	// the layer is linked to one (NewDecodingLayers, gopacket.NewPacket).
	bth  *BTH
	next gopacket.LayerType
}

func (e *extBase) base() *extBase { return e }

// NextLayerType returns the layer type of the extension header that follows
// this one in the packet's opcode, or gopacket.LayerTypePayload after the
// last one or when the layer is not linked to a BTH.
func (e *extBase) NextLayerType() gopacket.LayerType { return e.next }

// decode resets e, keeping its link, and splits data after a header h. It
// returns the header's bytes.
func (e *extBase) decode(h packet.Header, data []byte, df gopacket.DecodeFeedback) ([]byte, error) {
	*e = extBase{bth: e.bth}
	n := h.Size()
	if len(data) < n {
		df.SetTruncated()
		return nil, packet.ErrTruncated
	}
	e.Contents, e.Payload = data[:n], data[n:]
	e.next = gopacket.LayerTypePayload
	if e.bth != nil {
		e.next = nextLayerType(e.bth.Opcode, int(h))
	}
	return data[:n], nil
}

// extLayer is implemented by every extension header layer.
type extLayer interface {
	gopacket.DecodingLayer
	gopacket.Layer
	base() *extBase
}

// newExtLayer returns an empty layer for header h.
func newExtLayer(h packet.Header) extLayer {
	switch h {
	case packet.HeaderRDETH:
		return &RDETH{}
	case packet.HeaderDETH:
		return &DETH{}
	case packet.HeaderFETH:
		return &FETH{}
	case packet.HeaderRETH:
		return &RETH{}
	case packet.HeaderAtomicETH:
		return &AtomicETH{}
	case packet.HeaderAETH:
		return &AETH{}
	case packet.HeaderAtomicAckETH:
		return &AtomicAckETH{}
	case packet.HeaderImmDt:
		return &ImmDt{}
	default:
		return &IETH{}
	}
}

// extDecoder is the gopacket decoder of extension header h. With bth set it
// continues with the next header of bth's opcode; without, it hands the
// rest of the data on as payload.
type extDecoder struct {
	h   packet.Header
	bth *BTH
}

// Decode decodes header d.h at the start of data.
func (d extDecoder) Decode(data []byte, p gopacket.PacketBuilder) error {
	l := newExtLayer(d.h)
	l.base().bth = d.bth
	if err := l.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(l)
	if d.bth != nil {
		if h, ok := nextHeader(d.bth.Opcode, int(d.h)); ok {
			return p.NextDecoder(extDecoder{h: h, bth: d.bth})
		}
	}
	return p.NextDecoder(gopacket.LayerTypePayload)
}
