package dump

import (
	"net/netip"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/gorxe/gorxe/layers"
)

// Packet is a decoded RoCEv2 frame. Its layers belong to the Decoder that
// produced it and are overwritten by its next Decode.
type Packet struct {
	Frame    int            // 1-based index of the frame in the capture
	Src, Dst netip.AddrPort // IP addresses and UDP ports

	IPv4 *gplayers.IPv4 // exactly one of IPv4 and IPv6 is set
	IPv6 *gplayers.IPv6
	UDP  *gplayers.UDP

	// The RoCE headers; an extension header the opcode does not carry is nil.
	BTH          *layers.BTH
	RDETH        *layers.RDETH
	DETH         *layers.DETH
	FETH         *layers.FETH
	RETH         *layers.RETH
	AtomicETH    *layers.AtomicETH
	AETH         *layers.AETH
	AtomicAckETH *layers.AtomicAckETH
	ImmDt        *layers.ImmDt
	IETH         *layers.IETH
	Payload      []byte // the message data, without pad and ICRC

	// ICRCErr is nil if the ICRC matched the packet, otherwise why not
	// (packet.ErrBadICRC when it simply differs).
	ICRCErr error
}

// Decoder decodes frames into Packets. It reuses its layers from frame to
// frame, so it is not safe for concurrent use.
type Decoder struct {
	eth   gplayers.Ethernet
	dot1q gplayers.Dot1Q
	sll   gplayers.LinuxSLL
	sll2  gplayers.LinuxSLL2
	ip4   gplayers.IPv4
	ip6   gplayers.IPv6
	udp   gplayers.UDP
	roce  *layers.DecodingLayers

	parsers map[gopacket.LayerType]*gopacket.DecodingLayerParser
	byType  map[gopacket.LayerType]gopacket.DecodingLayer
	decoded []gopacket.LayerType
	pkt     Packet
}

// NewDecoder returns a Decoder.
func NewDecoder() *Decoder {
	d := &Decoder{roce: layers.NewDecodingLayers(), parsers: map[gopacket.LayerType]*gopacket.DecodingLayerParser{}}
	d.byType = map[gopacket.LayerType]gopacket.DecodingLayer{}
	for _, l := range d.layers() {
		d.byType[l.CanDecode().LayerTypes()[0]] = l
	}
	return d
}

func (d *Decoder) layers() []gopacket.DecodingLayer {
	return append([]gopacket.DecodingLayer{&d.eth, &d.dot1q, &d.sll, &d.sll2, &d.ip4, &d.ip6, &d.udp}, d.roce.Layers()...)
}

// parser returns the parser whose first layer is first.
func (d *Decoder) parser(first gopacket.LayerType) *gopacket.DecodingLayerParser {
	p := d.parsers[first]
	if p == nil {
		p = gopacket.NewDecodingLayerParser(first, d.layers()...)
		p.IgnoreUnsupported = true // other protocols end the walk: not RoCE
		d.parsers[first] = p
	}
	return p
}

// firstLayer returns the layer a frame of link type lt starts with.
func firstLayer(lt gplayers.LinkType, data []byte) (gopacket.LayerType, bool) {
	switch lt {
	case gplayers.LinkTypeEthernet:
		return gplayers.LayerTypeEthernet, true
	case gplayers.LinkTypeLinuxSLL:
		return gplayers.LayerTypeLinuxSLL, true
	case gplayers.LinkTypeLinuxSLL2:
		return gplayers.LayerTypeLinuxSLL2, true
	case gplayers.LinkTypeIPv4:
		return gplayers.LayerTypeIPv4, true
	case gplayers.LinkTypeIPv6:
		return gplayers.LayerTypeIPv6, true
	case gplayers.LinkTypeRaw, linkTypeDLTRaw:
		if len(data) > 0 && data[0]>>4 == 6 {
			return gplayers.LayerTypeIPv6, true
		}
		return gplayers.LayerTypeIPv4, true
	}
	return 0, false
}

// linkTypeDLTRaw is DLT_RAW as most systems number it, which some writers put
// in files instead of LINKTYPE_RAW (101).
const linkTypeDLTRaw gplayers.LinkType = 12

// Decode decodes f. It returns ErrNotRoCE for a frame that is not a RoCEv2
// packet, a *FrameError for one that cannot be decoded, or the packet. A
// packet whose ICRC does not match is returned with ICRCErr set.
func (d *Decoder) Decode(f Frame) (*Packet, error) {
	first, ok := firstLayer(f.LinkType, f.Data)
	if !ok {
		return nil, &FrameError{Frame: f.Index, Len: len(f.Data), Header: f.LinkType.String() + " link layer", Err: ErrUnsupportedLinkType}
	}
	p := d.parser(first)
	err := p.DecodeLayers(f.Data, &d.decoded)
	fail := func(e error) (*Packet, error) {
		return nil, &FrameError{Frame: f.Index, Len: len(f.Data), Header: d.failedLayer(first).String(), Err: e}
	}
	if len(f.Data) == 0 {
		return fail(ErrFrameTruncated)
	}
	if !d.has(gplayers.LayerTypeUDP) || d.udp.NextLayerType() != layers.LayerTypeBTH {
		if err != nil {
			return fail(err)
		}
		return nil, ErrNotRoCE
	}
	if p.Truncated || f.Length > len(f.Data) {
		return nil, &FrameError{Frame: f.Index, Len: len(f.Data), Header: "RoCE packet", Err: ErrFrameTruncated}
	}
	if err != nil {
		return fail(err)
	}
	return d.packet(f.Index), nil
}

func (d *Decoder) has(t gopacket.LayerType) bool {
	for _, u := range d.decoded {
		if u == t {
			return true
		}
	}
	return false
}

// failedLayer returns the layer type the parser failed on: the one after the
// last it decoded.
func (d *Decoder) failedLayer(first gopacket.LayerType) gopacket.LayerType {
	if len(d.decoded) == 0 {
		return first
	}
	return d.byType[d.decoded[len(d.decoded)-1]].NextLayerType()
}

// packet gathers the decoded layers into d.pkt.
func (d *Decoder) packet(frame int) *Packet {
	r := d.roce
	p := &d.pkt
	*p = Packet{Frame: frame, UDP: &d.udp, BTH: &r.BTH}
	var src, dst netip.Addr
	var ip gopacket.NetworkLayer
	if d.has(gplayers.LayerTypeIPv6) {
		p.IPv6, ip = &d.ip6, &d.ip6
		src, _ = netip.AddrFromSlice(d.ip6.SrcIP.To16())
		dst, _ = netip.AddrFromSlice(d.ip6.DstIP.To16())
	} else {
		p.IPv4, ip = &d.ip4, &d.ip4
		src, _ = netip.AddrFromSlice(d.ip4.SrcIP.To4())
		dst, _ = netip.AddrFromSlice(d.ip4.DstIP.To4())
	}
	p.Src = netip.AddrPortFrom(src, uint16(d.udp.SrcPort))
	p.Dst = netip.AddrPortFrom(dst, uint16(d.udp.DstPort))
	// The message data is what the last transport header leaves.
	var last gopacket.Layer = &r.BTH
	for _, t := range d.decoded {
		switch t {
		case layers.LayerTypeRDETH:
			p.RDETH, last = &r.RDETH, &r.RDETH
		case layers.LayerTypeDETH:
			p.DETH, last = &r.DETH, &r.DETH
		case layers.LayerTypeFETH:
			p.FETH, last = &r.FETH, &r.FETH
		case layers.LayerTypeRETH:
			p.RETH, last = &r.RETH, &r.RETH
		case layers.LayerTypeAtomicETH:
			p.AtomicETH, last = &r.AtomicETH, &r.AtomicETH
		case layers.LayerTypeAETH:
			p.AETH, last = &r.AETH, &r.AETH
		case layers.LayerTypeAtomicAckETH:
			p.AtomicAckETH, last = &r.AtomicAckETH, &r.AtomicAckETH
		case layers.LayerTypeImmDt:
			p.ImmDt, last = &r.ImmDt, &r.ImmDt
		case layers.LayerTypeIETH:
			p.IETH, last = &r.IETH, &r.IETH
		}
	}
	p.Payload = last.LayerPayload()
	p.ICRCErr = layers.VerifyICRC(ip, &d.udp)
	return p
}
