package dump

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/gorxe/gorxe/cm/mad"
	"github.com/gorxe/gorxe/layers"
	"github.com/gorxe/gorxe/packet"
)

// WriteVerbose writes p's summary line and then every field of every header,
// IP and UDP included, with its specification name, its value and what it
// means, for a reader learning the protocol from real packets.
func (p *Packet) WriteVerbose(w io.Writer) error { return p.writeVerbose(w, p.Line()) }

// writeVerbose is WriteVerbose with head as the summary line.
func (p *Packet) writeVerbose(w io.Writer, head string) error {
	v := &verbose{}
	v.printf("%s\n", head)
	v.fault(p)
	if p.IPv4 != nil {
		v.ipv4(p.IPv4)
	} else {
		v.ipv6(p.IPv6)
	}
	v.udp(p.UDP, len(p.BTH.Contents)+len(p.BTH.Payload)+len(p.BTH.Pad)+packet.ICRCSize)
	v.bth(p)
	v.extensions(p)
	v.mad(p)
	v.payload(p)
	v.icrc(p)
	_, err := io.WriteString(w, v.String())
	return err
}

// verbose accumulates the lines of a verbose dump.
type verbose struct{ strings.Builder }

func (v *verbose) printf(format string, args ...any) { fmt.Fprintf(v, format, args...) }

// header starts the section of one header.
func (v *verbose) header(name, long string, size int) {
	v.printf("  %s: %s, %d bytes\n", name, long, size)
}

// field writes one field: its spec name, its value and its meaning.
func (v *verbose) field(name string, value any, meaning string, args ...any) {
	v.printf("    %-22s %-20v %s\n", name, value, fmt.Sprintf(meaning, args...))
}

func bit(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (v *verbose) ipv4(ip *gplayers.IPv4) {
	v.header("IPv4", "Internet Protocol version 4 header", int(ip.IHL)*4)
	v.field("Version", ip.Version, "IP version")
	v.field("IHL", ip.IHL, "header length in 32-bit words (%d bytes); RoCEv2 uses no options", int(ip.IHL)*4)
	v.field("DSCP", ip.TOS>>2, "traffic class for switch queues (from the QP's traffic_class); masked out of the ICRC")
	v.field("ECN", ip.TOS&3, "%s; switches mark CE under congestion, masked out of the ICRC", ecnName(ip.TOS&3))
	v.field("Total Length", ip.Length, "IP header + UDP header + RoCE packet, in bytes")
	v.field("Identification", fmt.Sprintf("0x%04x", ip.Id), "set by the sender's kernel; covered by the ICRC")
	v.field("Flags", ipv4Flags(ip.Flags), "DF: never fragmented, a RoCE packet fits the path MTU; covered by the ICRC")
	v.field("Fragment Offset", ip.FragOffset, "always 0")
	v.field("TTL", ip.TTL, "hops left; routers decrement it, so it is masked out of the ICRC")
	v.field("Protocol", ip.Protocol, "%v", ip.Protocol)
	v.field("Header Checksum", fmt.Sprintf("0x%04x", ip.Checksum), "covers the IP header only; changes with TTL, masked out of the ICRC")
	v.field("Source Address", ip.SrcIP, "sender; its GID is ::ffff:%v", ip.SrcIP)
	v.field("Destination Address", ip.DstIP, "receiver; its GID is ::ffff:%v", ip.DstIP)
}

func (v *verbose) ipv6(ip *gplayers.IPv6) {
	v.header("IPv6", "Internet Protocol version 6 header", packet.IPv6HeaderSize)
	v.field("Version", ip.Version, "IP version")
	v.field("Traffic Class", fmt.Sprintf("0x%02x", ip.TrafficClass), "DSCP %d, %s; masked out of the ICRC", ip.TrafficClass>>2, ecnName(ip.TrafficClass&3))
	v.field("Flow Label", fmt.Sprintf("0x%05x", ip.FlowLabel), "flow hash for ECMP; masked out of the ICRC")
	v.field("Payload Length", ip.Length, "UDP header + RoCE packet, in bytes")
	v.field("Next Header", ip.NextHeader, "%v", ip.NextHeader)
	v.field("Hop Limit", ip.HopLimit, "hops left; routers decrement it, so it is masked out of the ICRC")
	v.field("Source Address", ip.SrcIP, "sender; also its GID")
	v.field("Destination Address", ip.DstIP, "receiver; also its GID")
}

func ecnName(ecn uint8) string {
	return [...]string{"Not-ECT (no ECN)", "ECT(1)", "ECT(0): ECN-capable", "CE: congestion experienced"}[ecn&3]
}

func ipv4Flags(f gplayers.IPv4Flag) string {
	var s []string
	if f&gplayers.IPv4DontFragment != 0 {
		s = append(s, "DF")
	}
	if f&gplayers.IPv4MoreFragments != 0 {
		s = append(s, "MF")
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ",")
}

func (v *verbose) udp(u *gplayers.UDP, roceLen int) {
	v.header("UDP", "User Datagram Protocol header", packet.UDPHeaderSize)
	v.field("Source Port", uint16(u.SrcPort), "picked per QP (rxe: a hash into 0xC000-0xFFFF) so ECMP spreads QPs over paths")
	if u.DstPort == packet.UDPPort {
		v.field("Destination Port", uint16(u.DstPort), "4791 is the IANA port of RoCEv2")
	} else {
		v.field("Destination Port", uint16(u.DstPort), "RoCEv2 moved off its IANA port, 4791, as test setups do")
	}
	v.field("Length", u.Length, "UDP header (8) + RoCE packet (%d)", roceLen)
	if u.Checksum == 0 {
		v.field("Checksum", "0x0000", "0 means not computed: RoCE relies on its own ICRC; masked out of the ICRC")
	} else {
		v.field("Checksum", fmt.Sprintf("0x%04x", u.Checksum), "UDP checksum; masked out of the ICRC")
	}
}

var transportNames = map[packet.Transport]string{
	packet.TransportRC:  "Reliable Connection",
	packet.TransportUC:  "Unreliable Connection",
	packet.TransportRD:  "Reliable Datagram",
	packet.TransportUD:  "Unreliable Datagram",
	packet.TransportCNP: "Congestion Notification Packet",
}

func (v *verbose) bth(p *Packet) {
	b := &p.BTH.BTHFields
	op := b.Opcode
	v.header("BTH", "Base Transport Header (IBTA 9.2)", packet.BTHSize)
	what := fmt.Sprintf("%s: %s transport, %s", op, transportNames[op.Transport()], op.Kind())
	if op.HasPayload() && op.Kind() != packet.KindCNP {
		what += fmt.Sprintf(", %s packet of its message", op.Position())
	}
	v.field("OpCode", fmt.Sprintf("0x%02x", uint8(op)), "%s; the opcode alone says which headers follow", what)
	v.field("SE (Solicited Event)", bit(b.SolicitedEvent), "1 asks the receiver to wake a consumer waiting for solicited completions")
	v.field("M (MigReq)", bit(b.MigReq), "automatic path migration state; 1 once the QP has migrated (rxe never does)")
	v.field("PadCount", b.PadCount, "%d pad bytes follow the payload to make it a multiple of 4 bytes", b.PadCount)
	v.field("TVer", b.TransportVersion, "transport header version; always 0, receivers drop others")
	v.field("P_Key", fmt.Sprintf("0x%04x", b.PKey), "partition key; must match the receiving QP's; 0xffff is the default partition, full member")
	v.field("FECN", bit(b.FECN), "forward congestion notification; not covered by the ICRC")
	v.field("BECN", bit(b.BECN), "backward congestion notification; not covered by the ICRC")
	v.field("DestQP", fmt.Sprintf("0x%06x", b.DestQP), "the receiver's queue pair number (24 bits); QP 1 is the GSI (connection manager)")
	ack := "the responder acknowledges later, when it chooses (coalescing)"
	if b.AckReq {
		ack = "the requester asks the responder to acknowledge up to this packet now"
	}
	if !op.IsRequest() {
		ack = "only meaningful on requests"
	} else if t := op.Transport(); t == packet.TransportUC || t == packet.TransportUD {
		ack = "unacknowledged service: no responder acts on it (kernel rxe sets it on QP1's MADs only)"
	}
	v.field("A (AckReq)", bit(b.AckReq), "%s", ack)
	v.field("PSN", fmt.Sprintf("%d (0x%06x)", b.PSN, uint32(b.PSN)), "%s", psnMeaning(op))
}

func psnMeaning(op packet.Opcode) string {
	switch op.Kind() {
	case packet.KindAcknowledge, packet.KindAtomicAcknowledge:
		return "packet sequence number: an ACK names the last request PSN it covers; ACKs are cumulative"
	case packet.KindRDMAReadResponse:
		return "packet sequence number: READ responses reuse the PSNs the read request reserved, one per response packet"
	case packet.KindRDMAReadRequest:
		return "packet sequence number: a read request reserves one PSN per response packet it will get back"
	}
	if op.Transport() == packet.TransportUD {
		return "packet sequence number; UD receivers do not check it"
	}
	return "packet sequence number: 24 bits, one per packet, wraps; the receiver detects loss and duplicates with it"
}

func (v *verbose) extensions(p *Packet) {
	kind := p.BTH.Opcode.Kind()
	for _, l := range p.Ext {
		d := l.Header.Desc()
		v.header(d.Name, d.Title, d.Size)
		for _, f := range d.Fields {
			f = f.For(kind)
			val := f.Value(l.Contents)
			if f.Base == packet.BaseSyndrome {
				v.field(f.Name, number(f, val), "%s", syndromeMeaning(packet.Syndrome(val)))
				continue
			}
			v.field(f.Name, number(f, val), "%s", f.Meaning(val))
		}
	}
}

// syndromeMeaning explains an AETH syndrome: its type in the top three bits
// and the value in the low five.
func syndromeMeaning(s packet.Syndrome) string {
	switch s.Type() {
	case packet.SyndromeTypeACK:
		if s == packet.SyndromeACKUnlimited {
			return "ACK (type 0b000), credit code 31: unlimited credits (rxe sends no other)"
		}
		return fmt.Sprintf("ACK (type 0b000), %d receive credits advertised", s.Value())
	case packet.SyndromeTypeRNRNAK:
		return fmt.Sprintf("RNR NAK (type 0b001): receiver not ready, no receive posted; retry after timer code %d = %s ms",
			s.Value(), rnrTimerMillis(s.Value()))
	case packet.SyndromeTypeNAK:
		names := map[packet.Syndrome]string{
			packet.SyndromeNAKPSNSequenceError:       "PSN sequence error: a packet was lost, resend from this PSN",
			packet.SyndromeNAKInvalidRequest:         "invalid request: unsupported or malformed request",
			packet.SyndromeNAKRemoteAccessError:      "remote access error: bad R_Key, bounds or access rights",
			packet.SyndromeNAKRemoteOperationalError: "remote operational error: the responder failed",
			packet.SyndromeNAKInvalidRDRequest:       "invalid RD request",
		}
		if n, ok := names[s]; ok {
			return fmt.Sprintf("NAK (type 0b011) code %d, %s", s.Value(), n)
		}
		return fmt.Sprintf("NAK (type 0b011) with reserved code %d", s.Value())
	}
	return "reserved syndrome type 0b010"
}

// mad writes the MAD a packet to QP1 carries: its header and, for a
// connection manager message, the message's main fields, each with the name
// Wireshark filters it by.
func (v *verbose) mad(p *Packet) {
	msg, fields := p.MAD()
	if fields == nil {
		return
	}
	title := "Management Datagram (IBTA 13.4)"
	if msg != "" {
		title += ", connection manager " + msg + " (IBTA 12.6)"
	}
	v.header("MAD", title, mad.Size)
	for _, f := range fields {
		// The CM's field names run longer than the transport headers'.
		if f.IsAddr() {
			v.printf("    %-26s %-20v %s\n", f.Title, f.Addr, f.Name)
			continue
		}
		v.printf("    %-26s %-20s %s%s\n", f.Title, fmt.Sprintf("0x%0*x", (int(f.Bits)+3)/4, f.Value), f.Name, madMeaning(f))
	}
}

// madMeaning explains the values of the fields that are codes.
func madMeaning(f MADField) string {
	switch f.Name {
	case "infiniband.mad.mgmtclass":
		if f.Value == mad.ClassCM {
			return ": communication management"
		}
	case "infiniband.mad.attributeid":
		if a := mad.AttrID(f.Value); a.Known() {
			return ": " + a.String()
		}
	case "infiniband.cm.rej.reason":
		return ": " + mad.RejectReason(f.Value).String()
	case "infiniband.cm.req.pppmtu":
		if m := mad.MTU(f.Value); m.Valid() {
			return fmt.Sprintf(": %d bytes", m.Bytes())
		}
	case "infiniband.cm.req.transpsvctype":
		return ": " + mad.TransportType(f.Value).String()
	case "infiniband.cm.req.remoteresptout", "infiniband.cm.req.localresptout":
		return fmt.Sprintf(": %v", mad.Timeout(uint8(f.Value)))
	}
	return ""
}

func (v *verbose) payload(p *Packet) {
	n := len(p.Payload)
	show := p.Payload[:min(n, 16)]
	more := ""
	if n > len(show) {
		more = " ..."
	}
	if n == 0 {
		v.printf("  Payload: none\n")
	} else {
		v.printf("  Payload: %d bytes: % x%s\n", n, show, more)
	}
	if len(p.BTH.Pad) > 0 {
		v.printf("  Pad: %d bytes % x\n", len(p.BTH.Pad), p.BTH.Pad)
	}
}

// expectedICRC returns, in wire order, the ICRC the packet should carry.
func (p *Packet) expectedICRC() string {
	var ip gopacket.NetworkLayer = p.IPv6
	if p.IPv4 != nil {
		ip = p.IPv4
	}
	e, err := layers.Envelope(ip, p.UDP)
	if err != nil {
		return "unknown"
	}
	c, err := e.ICRC(p.UDP.Payload)
	if err != nil {
		return "unknown"
	}
	return icrcWire(c)
}

func (v *verbose) icrc(p *Packet) {
	v.header("ICRC", "Invariant CRC", packet.ICRCSize)
	v.field("ICRC", icrcWire(p.BTH.ICRC), "wire bytes; the CRC-32 value 0x%08x is stored little-endian, like an Ethernet FCS", p.BTH.ICRC)
	v.printf("    %s\n", "covers 8 bytes of 0xff (for the absent InfiniBand LRH), the IP and UDP headers, the BTH and")
	v.printf("    %s\n", "everything after it up to the ICRC, with the fields that may change in flight (TOS/traffic")
	v.printf("    %s\n", "class, TTL/hop limit, flow label, IP and UDP checksums, FECN/BECN) replaced by ones")
	exact := "exact: IPv6 leaves nothing covered unknown"
	if p.IPv4 != nil {
		exact = fmt.Sprintf("exact: the covered IPv4 Identification (0x%04x) and flags are known from the captured header", p.IPv4.Id)
	}
	switch {
	case p.ICRCErr == nil:
		v.printf("    verified: OK (%s)\n", exact)
	case errors.Is(p.ICRCErr, packet.ErrBadICRC):
		v.printf("    verified: MISMATCH, expected %s: the packet was corrupted or altered in a covered field (%s)\n", p.expectedICRC(), exact)
	default:
		v.printf("    not verified: %v\n", p.ICRCErr)
	}
}
