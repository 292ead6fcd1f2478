package dump

import (
	"net/netip"
	"slices"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/gorxe/gorxe/capture"
	"github.com/gorxe/gorxe/layers"
	"github.com/gorxe/gorxe/netio"
	"github.com/gorxe/gorxe/packet"
)

// Packet is a decoded RoCEv2 frame. Its layers belong to the Decoder that
// produced it and are overwritten by its next Decode.
type Packet struct {
	Frame    int            // 1-based index of the frame in the capture
	Time     time.Time      // when the frame was captured (zero if unknown)
	Src, Dst netip.AddrPort // IP addresses and UDP ports

	IPv4 *gplayers.IPv4 // exactly one of IPv4 and IPv6 is set
	IPv6 *gplayers.IPv6
	UDP  *gplayers.UDP

	// The RoCE headers: the BTH, then the extension headers the opcode
	// carries, in wire order. Header returns one by name.
	BTH     *layers.BTH
	Ext     []*layers.Ext
	Payload []byte // the message data, without pad and ICRC

	// ICRCErr is nil if the ICRC matched the packet, otherwise why not
	// (packet.ErrBadICRC when it simply differs).
	ICRCErr error

	// Fault is what gorxe's fault injection did to the packet, from the
	// capture's packet comment (see capture.Fault): netio.Lost when it
	// dropped it, so it never reached the network; netio.Sent with marks
	// when it sent a copy, a corrupted or a late packet; netio.Sent alone
	// when it did nothing. Faults names it in words.
	Fault netio.Direction
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
	ext     [packet.NumHeaders]*layers.Ext // backs pkt.Ext

	// ports are the UDP ports besides 4791 that carry RoCEv2; roceParser
	// decodes their payloads, which gopacket's port table hands on as
	// opaque payload.
	ports      []uint16
	roceParser *gopacket.DecodingLayerParser
	roceTail   []gopacket.LayerType

	// detect makes d learn ports from datagrams that prove to be RoCEv2;
	// detected lists the ports it learnt so, in order.
	detect   bool
	detected []uint16

	// sawUDP tells whether the last frame decoded was UDP, so Run can say
	// what a capture without RoCE held instead.
	sawUDP bool
}

// NewDecoder returns a Decoder of RoCEv2 on UDP port 4791; AddPort adds
// others.
func NewDecoder() *Decoder {
	d := &Decoder{roce: layers.NewDecodingLayers(), parsers: map[gopacket.LayerType]*gopacket.DecodingLayerParser{}}
	d.roceParser = gopacket.NewDecodingLayerParser(layers.LayerTypeBTH, d.roce.Layers()...)
	d.byType = map[gopacket.LayerType]gopacket.DecodingLayer{}
	for _, l := range d.layers() {
		d.byType[l.CanDecode().LayerTypes()[0]] = l
	}
	return d
}

// AddPort makes d decode UDP datagrams to or from port as RoCEv2 too. Unlike
// layers.RegisterUDPPort it changes nothing outside d.
func (d *Decoder) AddPort(port uint16) {
	if port != packet.UDPPort && !slices.Contains(d.ports, port) {
		d.ports = append(d.ports, port)
	}
}

// learn adds port as a detected RoCEv2 port; it returns true.
func (d *Decoder) learn(port uint16) bool {
	d.AddPort(port)
	if !slices.Contains(d.detected, port) {
		d.detected = append(d.detected, port)
	}
	return true
}

// Ports returns the UDP ports d decodes RoCEv2 on: 4791 first, then those
// added, in the order they were.
func (d *Decoder) Ports() []uint16 {
	return append([]uint16{packet.UDPPort}, d.ports...)
}

// DetectPorts makes d learn RoCEv2 ports from the traffic: a UDP datagram to
// a port d does not know, whose payload is a well-formed RoCEv2 packet with
// an ICRC that matches its IP and UDP headers exactly, adds its destination
// port, where every RoCEv2 packet is sent. A 32-bit CRC over the headers and
// the payload does not match by chance, so other protocols are not taken for
// RoCE; the one limit is IPv4 traffic that was captured with its
// Identification rewritten, which no capture does. It is how a classic pcap
// file, which has no place to announce its port, decodes without being told.
func (d *Decoder) DetectPorts() { d.detect = true }

// Detected returns the ports DetectPorts learnt, in the order it did.
func (d *Decoder) Detected() []uint16 { return d.detected }

// provesRoCE reports whether the payload of d.udp is a RoCEv2 packet whose
// ICRC verifies against the decoded IP and UDP headers.
func (d *Decoder) provesRoCE() bool {
	var p packet.Parsed
	if packet.Parse(d.udp.Payload, &p) != nil {
		return false
	}
	var ip gopacket.NetworkLayer = &d.ip4
	if d.has(gplayers.LayerTypeIPv6) {
		ip = &d.ip6
	}
	return layers.VerifyICRC(ip, &d.udp) == nil
}

// extraPort reports whether u is to or from a port added with AddPort.
func (d *Decoder) extraPort(u *gplayers.UDP) bool {
	return slices.Contains(d.ports, uint16(u.DstPort)) || slices.Contains(d.ports, uint16(u.SrcPort))
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
	d.sawUDP = false
	first, ok := firstLayer(f.LinkType, f.Data)
	if !ok {
		return nil, &FrameError{Frame: f.Index, Len: len(f.Data), Header: f.LinkType.String() + " link layer", Err: ErrUnsupportedLinkType}
	}
	p := d.parser(first)
	err := p.DecodeLayers(f.Data, &d.decoded)
	failed := d.failedLayer(first)
	fail := func(e error) (*Packet, error) {
		return nil, &FrameError{Frame: f.Index, Len: len(f.Data), Header: failed.String(), Err: e}
	}
	if len(f.Data) == 0 {
		return fail(ErrFrameTruncated)
	}
	d.sawUDP = d.has(gplayers.LayerTypeUDP)
	truncated := p.Truncated
	switch {
	case !d.sawUDP:
		if err != nil {
			return fail(err)
		}
		return nil, ErrNotRoCE
	case d.udp.NextLayerType() == layers.LayerTypeBTH:
	case d.extraPort(&d.udp) || d.detect && d.provesRoCE() && d.learn(uint16(d.udp.DstPort)):
		// gopacket's port table sends this port elsewhere: decode the
		// UDP payload as RoCE here, after the layers up to UDP.
		d.decoded = d.decoded[:slices.Index(d.decoded, gplayers.LayerTypeUDP)+1]
		err = d.roceParser.DecodeLayers(d.udp.Payload, &d.roceTail)
		d.decoded = append(d.decoded, d.roceTail...)
		truncated = d.roceParser.Truncated
		failed = layers.LayerTypeBTH
		if len(d.roceTail) > 0 {
			failed = d.byType[d.roceTail[len(d.roceTail)-1]].NextLayerType()
		}
	default:
		if err != nil {
			return fail(err)
		}
		return nil, ErrNotRoCE
	}
	if truncated || f.Length > len(f.Data) {
		return nil, &FrameError{Frame: f.Index, Len: len(f.Data), Header: "RoCE packet", Err: ErrFrameTruncated}
	}
	if err != nil {
		return fail(err)
	}
	return d.packet(f), nil
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

// packet gathers the decoded layers of f into d.pkt.
func (d *Decoder) packet(f Frame) *Packet {
	r := d.roce
	p := &d.pkt
	*p = Packet{Frame: f.Index, Time: f.Time, UDP: &d.udp, BTH: &r.BTH, Ext: d.ext[:0], Fault: capture.Fault(f.Comments)}
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
		if h, ok := layers.HeaderOf(t); ok {
			p.Ext = append(p.Ext, &r.Ext[h])
			last = &r.Ext[h]
		}
	}
	p.Payload = last.LayerPayload()
	p.ICRCErr = layers.VerifyICRC(ip, &d.udp)
	return p
}

// Header returns the bytes of extension header h, or nil if the packet does
// not carry it. Read them with h's view type: packet.AETH(p.Header(packet.HeaderAETH)).
func (p *Packet) Header(h packet.Header) []byte {
	for _, l := range p.Ext {
		if l.Header == h {
			return l.Contents
		}
	}
	return nil
}
