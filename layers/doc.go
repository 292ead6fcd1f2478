// Package layers decodes and serializes RoCEv2 packets with gopacket: one
// gopacket layer per InfiniBand transport header, registered on UDP port 4791
// and on any other port given to [RegisterUDPPort].
//
// Importing the package is enough for gopacket.NewPacket to dissect RoCEv2
// inside Ethernet, IPv4, IPv6 and UDP:
//
//	import (
//		"github.com/gopacket/gopacket"
//		gplayers "github.com/gopacket/gopacket/layers"
//		rocelayers "github.com/gorxe/gorxe/layers"
//	)
//
//	p := gopacket.NewPacket(frame, gplayers.LayerTypeEthernet, gopacket.Default)
//	if bth, ok := p.Layer(rocelayers.LayerTypeBTH).(*rocelayers.BTH); ok {
//		fmt.Println(bth.Opcode, bth.DestQP, bth.PSN)
//	}
//
// The header layouts, opcode table and CRC come from the packet package; this
// package only adapts them to gopacket's interfaces.
//
// # Layers and the ICRC trailer
//
// A RoCEv2 packet is BTH, extension headers, payload, pad and ICRC. Each header
// is a layer: [BTH], then in wire order whichever extension headers the opcode
// prescribes, then a gopacket.Payload layer holding the payload. Every
// extension header is an [Ext] layer, one type driven by the packet package's
// header table, whose LayerType is the header's own (LayerTypeRDETH,
// LayerTypeDETH, LayerTypeFETH, LayerTypeRETH, LayerTypeAtomicETH,
// LayerTypeAETH, LayerTypeAtomicAckETH, LayerTypeImmDt, LayerTypeIETH); read
// its values through the header's view type, packet.RETH(l.Contents) and so
// on. The pad bytes
// and the four-byte ICRC are not a layer: the BTH layer's payload stops before
// them, and they are kept on the BTH layer as [BTH.Pad] and [BTH.ICRC]. So the
// last layer's payload is exactly the message data, and serializing the BTH
// layer appends the pad and ICRC after everything that follows it.
//
// The BTH layer validates the whole packet with packet.Parse before accepting
// it, so a packet decodes with this package exactly when packet.Parse accepts
// it, and fails with the same sentinel error otherwise.
//
// # Fast decoding with DecodingLayerParser
//
// Which extension header comes next depends on the opcode, which only the BTH
// carries. gopacket.NewPacket passes it along by itself; for a
// gopacket.DecodingLayerParser, take the layers from [NewDecodingLayers], which
// links each extension layer to the BTH layer decoded before it:
//
//	roce := rocelayers.NewDecodingLayers()
//	parser := gopacket.NewDecodingLayerParser(gplayers.LayerTypeEthernet,
//		append([]gopacket.DecodingLayer{&eth, &ip4, &udp}, roce.Layers()...)...)
//
// An extension layer decoded on its own cannot know the opcode and reports
// gopacket.LayerTypePayload as its next layer.
//
// # Serializing
//
// Layers serialize with gopacket.SerializeLayers. With FixLengths the BTH pad
// count is set from the payload length; with ComputeChecksums the ICRC is
// computed, which needs the IP and UDP layers the packet travels in: call
// [BTH.SetNetworkLayerForICRC] first, as for gopacket's UDP checksum.
// Without either option the layers reproduce the decoded bytes exactly.
package layers
