package layers

import "github.com/gopacket/gopacket"

// DecodingLayers is one layer of every RoCEv2 header, linked so that each
// extension layer learns the opcode from the BTH layer decoded before it,
// plus a payload layer: all a gopacket.DecodingLayerParser needs after UDP.
// After a successful decode, the fields of the layers the parser reported
// hold the packet; the others hold stale values.
type DecodingLayers struct {
	BTH          BTH
	RDETH        RDETH
	DETH         DETH
	FETH         FETH
	RETH         RETH
	AtomicETH    AtomicETH
	AETH         AETH
	AtomicAckETH AtomicAckETH
	ImmDt        ImmDt
	IETH         IETH
	Payload      gopacket.Payload
}

// NewDecodingLayers returns a linked set of layers.
func NewDecodingLayers() *DecodingLayers {
	d := new(DecodingLayers)
	for _, l := range d.extLayers() {
		l.base().bth = &d.BTH
	}
	return d
}

func (d *DecodingLayers) extLayers() []extLayer {
	return []extLayer{&d.RDETH, &d.DETH, &d.FETH, &d.RETH, &d.AtomicETH, &d.AETH, &d.AtomicAckETH, &d.ImmDt, &d.IETH}
}

// Layers returns the layers of d, for gopacket.NewDecodingLayerParser or a
// DecodingLayerContainer.
func (d *DecodingLayers) Layers() []gopacket.DecodingLayer {
	ls := []gopacket.DecodingLayer{&d.BTH}
	for _, l := range d.extLayers() {
		ls = append(ls, l)
	}
	return append(ls, &d.Payload)
}
