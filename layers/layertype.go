package layers

import (
	"github.com/gopacket/gopacket"

	"github.com/gorxe/gorxe/packet"
)

// Layer type numbers. gopacket reserves 1000-1999 for application layer
// types and serves them from an array; the block starts at 1791 after the
// RoCEv2 port, 4791, to keep clear of the round numbers others pick. The BTH
// takes the first number, extension header h the number 1+h after it.
const layerTypeBase = 1791

// LayerTypeBTH is the layer type of the BTH.
var LayerTypeBTH = register(0, "BTH", gopacket.DecodeFunc(decodeBTH))

// extLayerTypes holds the layer type of every extension header, registered
// from the packet package's header table.
var extLayerTypes = registerExts()

// Layer types of the extension headers, one per header, so gopacket users
// see and look up each header by its own type. [ExtLayerType] returns any
// header's.
var (
	LayerTypeRDETH        = ExtLayerType(packet.HeaderRDETH)
	LayerTypeDETH         = ExtLayerType(packet.HeaderDETH)
	LayerTypeFETH         = ExtLayerType(packet.HeaderFETH)
	LayerTypeRETH         = ExtLayerType(packet.HeaderRETH)
	LayerTypeAtomicETH    = ExtLayerType(packet.HeaderAtomicETH)
	LayerTypeAETH         = ExtLayerType(packet.HeaderAETH)
	LayerTypeAtomicAckETH = ExtLayerType(packet.HeaderAtomicAckETH)
	LayerTypeImmDt        = ExtLayerType(packet.HeaderImmDt)
	LayerTypeIETH         = ExtLayerType(packet.HeaderIETH)
)

func register(n int, name string, d gopacket.Decoder) gopacket.LayerType {
	return gopacket.RegisterLayerType(layerTypeBase+n, gopacket.LayerTypeMetadata{Name: name, Decoder: d})
}

// registerExts registers a layer type per extension header. Its decoder
// knows no opcode, so it decodes the header alone and hands the rest on as
// payload.
func registerExts() (ts [packet.NumHeaders]gopacket.LayerType) {
	for h := range packet.Header(packet.NumHeaders) {
		ts[h] = register(1+int(h), h.String(), extDecoder{h: h})
	}
	return ts
}

// ExtLayerType returns the layer type of extension header h, or
// gopacket.LayerTypeZero for an unknown header.
func ExtLayerType(h packet.Header) gopacket.LayerType {
	if h >= packet.NumHeaders {
		return gopacket.LayerTypeZero
	}
	return extLayerTypes[h]
}

// HeaderOf returns the extension header whose layer type is t, and false if
// t is not an extension header's.
func HeaderOf(t gopacket.LayerType) (packet.Header, bool) {
	h := packet.Header(int(t) - layerTypeBase - 1)
	if h >= packet.NumHeaders || extLayerTypes[h] != t {
		return 0, false
	}
	return h, true
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
		return extLayerTypes[h]
	}
	return gopacket.LayerTypePayload
}
