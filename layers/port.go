package layers

import (
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/gorxe/gorxe/packet"
)

func init() {
	RegisterUDPPort(packet.UDPPort)
}

// RegisterUDPPort makes gopacket decode UDP datagrams to or from port as
// RoCEv2, starting with the BTH, as it does for 4791 once this package is
// imported. Test setups and captures often carry RoCE on another port
// (gorxe can listen on any); this lets gopacket.NewPacket and decoders
// built on the UDP layer's NextLayerType follow it there.
//
// It changes gopacket's process-wide port table, which gopacket reads
// without a lock: call it before decoding starts, as from an init function
// or at the top of main. A port already claimed by another protocol's layer
// (53 for DNS, ...) is taken over.
func RegisterUDPPort(port uint16) {
	gplayers.RegisterUDPPortLayerType(gplayers.UDPPort(port), LayerTypeBTH)
}
