package layers

import (
	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/gorxe/gorxe/packet"
)

// Ext is the layer of one extension header, any of them: Header says which,
// and LayerType returns that header's own layer type (LayerTypeRETH, ...).
// Contents is the header's bytes and Payload what follows it up to the pad.
//
// Read the values through the header's view type in the packet package,
// which carries the IBTA field diagram:
//
//	if l, ok := p.Layer(rocelayers.LayerTypeRETH).(*rocelayers.Ext); ok {
//		reth := packet.RETH(l.Contents)
//		fmt.Println(reth.VirtualAddress(), reth.RKey())
//	}
//
// or, for code that handles every header alike, through the fields of
// l.Header.Desc(). To build one, take [NewExt] and encode into Contents.
type Ext struct {
	gplayers.BaseLayer
	Header packet.Header

	// bth is the BTH layer of the same packet, decoded before this one, when
	// the layer is linked to one (NewDecodingLayers, gopacket.NewPacket).
	bth  *BTH
	next gopacket.LayerType
}

// NewExt returns a layer of header h with zeroed contents of h's size, for
// the header's view type to encode into:
//
//	l := rocelayers.NewExt(packet.HeaderRETH)
//	packet.RETH(l.Contents).Encode(&packet.RETHFields{VirtualAddress: va, RKey: rkey, DMALength: n})
func NewExt(h packet.Header) *Ext {
	return &Ext{Header: h, BaseLayer: gplayers.BaseLayer{Contents: make([]byte, h.Size())}}
}

// LayerType returns the layer type of l.Header.
func (l *Ext) LayerType() gopacket.LayerType { return ExtLayerType(l.Header) }

// CanDecode returns the layer type of l.Header.
func (l *Ext) CanDecode() gopacket.LayerClass { return ExtLayerType(l.Header) }

// NextLayerType returns the layer type of the extension header that follows
// this one in the packet's opcode, or gopacket.LayerTypePayload after the
// last one or when the layer is not linked to a BTH.
func (l *Ext) NextLayerType() gopacket.LayerType { return l.next }

// DecodeFromBytes decodes the header l.Header at the start of data. It keeps
// l.Header and the link to a BTH, and resets the rest.
func (l *Ext) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	*l = Ext{Header: l.Header, bth: l.bth}
	n := l.Header.Size()
	if n == 0 {
		return ErrUnknownHeader
	}
	if len(data) < n {
		df.SetTruncated()
		return packet.ErrTruncated
	}
	l.Contents, l.Payload = data[:n:n], data[n:]
	l.next = gopacket.LayerTypePayload
	if l.bth != nil {
		l.next = nextLayerType(l.bth.Opcode, int(l.Header))
	}
	return nil
}

// SerializeTo prepends Contents to b. It returns ErrHeaderSize if Contents
// is not exactly as long as the header.
func (l *Ext) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	n := l.Header.Size()
	if n == 0 {
		return ErrUnknownHeader
	}
	if len(l.Contents) != n {
		return ErrHeaderSize
	}
	buf, err := b.PrependBytes(n)
	if err != nil {
		return err
	}
	copy(buf, l.Contents)
	return nil
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
	l := &Ext{Header: d.h, bth: d.bth}
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
