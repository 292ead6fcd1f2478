package layers

import (
	"github.com/gopacket/gopacket"

	"github.com/gorxe/gorxe/packet"
)

// DecodingLayers is one layer of every RoCEv2 header, linked so that each
// extension layer learns the opcode from the BTH layer decoded before it,
// plus a payload layer: all a gopacket.DecodingLayerParser needs after UDP.
// After a successful decode, the layers the parser reported hold the
// packet; the others hold stale values.
type DecodingLayers struct {
	BTH     BTH
	Ext     [packet.NumHeaders]Ext // Ext[h] decodes extension header h
	Payload gopacket.Payload
}

// NewDecodingLayers returns a linked set of layers.
func NewDecodingLayers() *DecodingLayers {
	d := new(DecodingLayers)
	for h := range d.Ext {
		d.Ext[h] = Ext{Header: packet.Header(h), bth: &d.BTH}
	}
	return d
}

// Layers returns the layers of d, for gopacket.NewDecodingLayerParser or a
// DecodingLayerContainer.
func (d *DecodingLayers) Layers() []gopacket.DecodingLayer {
	ls := []gopacket.DecodingLayer{&d.BTH}
	for h := range d.Ext {
		ls = append(ls, &d.Ext[h])
	}
	return append(ls, &d.Payload)
}
