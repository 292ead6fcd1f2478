package layers

import (
	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/gorxe/gorxe/packet"
)

// Layer type numbers. gopacket reserves 1000-1999 for application layer
// types and serves them from an array; the block starts at 1791 after the
// RoCEv2 port, 4791, to keep clear of the round numbers others pick.
const layerTypeBase = 1791

// Layer types of the RoCEv2 headers.
var (
	LayerTypeBTH          = register(0, "BTH", gopacket.DecodeFunc(decodeBTH))
	LayerTypeRDETH        = registerExt(1, packet.HeaderRDETH)
	LayerTypeDETH         = registerExt(2, packet.HeaderDETH)
	LayerTypeFETH         = registerExt(3, packet.HeaderFETH)
	LayerTypeRETH         = registerExt(4, packet.HeaderRETH)
	LayerTypeAtomicETH    = registerExt(5, packet.HeaderAtomicETH)
	LayerTypeAETH         = registerExt(6, packet.HeaderAETH)
	LayerTypeAtomicAckETH = registerExt(7, packet.HeaderAtomicAckETH)
	LayerTypeImmDt        = registerExt(8, packet.HeaderImmDt)
	LayerTypeIETH         = registerExt(9, packet.HeaderIETH)
)

func register(n int, name string, d gopacket.Decoder) gopacket.LayerType {
	return gopacket.RegisterLayerType(layerTypeBase+n, gopacket.LayerTypeMetadata{Name: name, Decoder: d})
}

// registerExt registers an extension header's layer type. Its decoder knows
// no opcode, so it decodes the header alone and hands the rest on as payload.
func registerExt(n int, h packet.Header) gopacket.LayerType {
	return register(n, h.String(), extDecoder{h: h})
}

func init() {
	gplayers.RegisterUDPPortLayerType(packet.UDPPort, LayerTypeBTH)
}

// headerLayerType maps an extension header to its layer type.
var headerLayerType = [...]gopacket.LayerType{
	packet.HeaderRDETH:        LayerTypeRDETH,
	packet.HeaderDETH:         LayerTypeDETH,
	packet.HeaderFETH:         LayerTypeFETH,
	packet.HeaderRETH:         LayerTypeRETH,
	packet.HeaderAtomicETH:    LayerTypeAtomicETH,
	packet.HeaderAETH:         LayerTypeAETH,
	packet.HeaderAtomicAckETH: LayerTypeAtomicAckETH,
	packet.HeaderImmDt:        LayerTypeImmDt,
	packet.HeaderIETH:         LayerTypeIETH,
}

// nextHeader returns the first extension header of op after the one at wire
// position after (-1 for the BTH), and false if none follows.
func nextHeader(op packet.Opcode, after int) (packet.Header, bool) {
	for h := range op.Headers().All() {
		if int(h) > after {
			return h, true
		}
	}
	return 0, false
}

// nextLayerType is nextHeader as a layer type, with the payload after the
// last header.
func nextLayerType(op packet.Opcode, after int) gopacket.LayerType {
	if h, ok := nextHeader(op, after); ok {
		return headerLayerType[h]
	}
	return gopacket.LayerTypePayload
}
