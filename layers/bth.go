package layers

import (
	"encoding/binary"
	"errors"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/gorxe/gorxe/packet"
)

// BTH is the Base Transport Header layer, the first layer of every RoCEv2
// packet. Its fields are those of packet.BTHFields, whose doc comment and the
// packet.BTH view carry the IBTA field diagram.
//
// Contents is the 12-byte header. Payload is what follows up to the pad: the
// extension headers and the message data. The pad and the ICRC trailer,
// which end the packet, are kept in Pad and ICRC.
type BTH struct {
	gplayers.BaseLayer
	packet.BTHFields

	// Pad holds the PadCount bytes between the payload and the ICRC. They
	// are zero on the wire; they are kept so re-serializing reproduces a
	// packet byte for byte. Decoding aliases the decoded buffer.
	Pad []byte

	// ICRC is the invariant CRC ending the packet, as a number: the wire
	// carries it little-endian, so Wireshark, which shows the four bytes in
	// wire order, prints the byte-reversed value. See packet.Envelope.ICRC
	// for what it covers.
	ICRC uint32

	// The framing SetNetworkLayerForICRC gave for ComputeChecksums.
	ip  gopacket.NetworkLayer
	udp *gplayers.UDP
}

// LayerType returns LayerTypeBTH.
func (l *BTH) LayerType() gopacket.LayerType { return LayerTypeBTH }

// CanDecode returns LayerTypeBTH.
func (l *BTH) CanDecode() gopacket.LayerClass { return LayerTypeBTH }

// NextLayerType returns the layer type of the first extension header the
// opcode prescribes, or gopacket.LayerTypePayload if it prescribes none.
func (l *BTH) NextLayerType() gopacket.LayerType { return nextLayerType(l.Opcode, -1) }

// DecodeFromBytes decodes the RoCEv2 packet data (a UDP payload, BTH to ICRC)
// into l. It accepts exactly the packets packet.Parse accepts and returns its
// error otherwise, flagging truncation to df. It does not check the ICRC,
// which needs the IP and UDP headers; see VerifyICRC.
func (l *BTH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	*l = BTH{}
	var p packet.Parsed
	if err := packet.Parse(data, &p); err != nil {
		if errors.Is(err, packet.ErrTruncated) {
			df.SetTruncated()
		}
		return err
	}
	payEnd := p.HeaderLen() + len(p.Payload())
	l.BTHFields = p.BTH().Fields()
	l.Contents = data[:packet.BTHSize]
	l.Payload = data[packet.BTHSize:payEnd]
	l.Pad = data[payEnd : len(data)-packet.ICRCSize]
	l.ICRC = p.ICRC()
	return nil
}

// SetNetworkLayerForICRC gives the IP (IPv4 or IPv6) and UDP layers that
// carry the packet, which SerializeTo needs to compute the ICRC when asked to
// ComputeChecksums. The IPv4 Identification and flags are covered by the
// ICRC, so set them before serializing.
func (l *BTH) SetNetworkLayerForICRC(ip gopacket.NetworkLayer, udp *gplayers.UDP) error {
	if _, err := Envelope(ip, udp); err != nil {
		return err
	}
	l.ip, l.udp = ip, udp
	return nil
}

// SerializeTo prepends the BTH to the extension headers and payload already
// in b, and appends the pad and ICRC after them.
//
// With opts.FixLengths, PadCount is set to pad the payload to a multiple of
// four bytes. With opts.ComputeChecksums, the ICRC is computed over the
// packet as carried by the layers given to SetNetworkLayerForICRC
// (ErrNoNetworkLayer if none were), and stored in l.ICRC. Otherwise PadCount
// and ICRC are written as they are. Pad bytes are copied from l.Pad when it
// has PadCount bytes, and are zero otherwise.
func (l *BTH) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if !l.Opcode.Valid() {
		return packet.ErrUnknownOpcode
	}
	payloadLen := len(b.Bytes()) - (l.Opcode.HeaderLen() - packet.BTHSize)
	if payloadLen < 0 {
		return ErrMissingHeaders
	}
	if opts.FixLengths {
		l.PadCount = uint8(-payloadLen & 3)
	}
	pad := int(l.PadCount & 3)
	tail, err := b.AppendBytes(pad + packet.ICRCSize)
	if err != nil {
		return err
	}
	if len(l.Pad) == pad {
		copy(tail, l.Pad)
	} else {
		clear(tail[:pad])
	}
	hdr, err := b.PrependBytes(packet.BTHSize)
	if err != nil {
		return err
	}
	packet.BTH(hdr).Encode(&l.BTHFields)
	pkt := b.Bytes()
	if !opts.ComputeChecksums {
		binary.LittleEndian.PutUint32(pkt[len(pkt)-packet.ICRCSize:], l.ICRC)
		return nil
	}
	env, err := Envelope(l.ip, l.udp)
	if err != nil {
		return err
	}
	if err := env.PutICRC(pkt); err != nil {
		return err
	}
	l.ICRC = binary.LittleEndian.Uint32(pkt[len(pkt)-packet.ICRCSize:])
	return nil
}

// decodeBTH is the gopacket decoder for LayerTypeBTH: it decodes the BTH and
// passes the opcode on to the extension header decoders.
func decodeBTH(data []byte, p gopacket.PacketBuilder) error {
	l := &BTH{}
	if err := l.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(l)
	if h, ok := nextHeader(l.Opcode, -1); ok {
		return p.NextDecoder(extDecoder{h: h, bth: l})
	}
	return p.NextDecoder(gopacket.LayerTypePayload)
}
