package demo

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gorxe/gorxe/netio"
	"github.com/gorxe/gorxe/packet"
)

// summary is one datagram as the narration shows it: its one-line decoding and the fields the
// retransmission bookkeeping needs.
type summary struct {
	line     string
	opcode   packet.Opcode
	dqpn     uint32
	psn      packet.PSN
	dmaLen   uint32 // RETH DMA length of a READ request: how many PSNs it reserves
	icrcOK   bool
	syndrome packet.Syndrome // valid when hasAETH
	hasAETH  bool
}

// summarize decodes the UDP payload of m, frame number frame ("-" when it is in no capture), a datagram a device handed to the network, straight
// with the packet package. Going through gopacket would find RoCE only on the port its layers are
// registered on, and the demo may run on any port. The ICRC is checked with the IPv4 ID 0 and DF
// bit gorxe's sockets send with, so a corrupted copy shows as icrc=BAD exactly as a receiver
// would find it.
func summarize(frame string, m *netio.Message) (summary, error) {
	var p packet.Parsed
	if err := packet.Parse(m.Buf, &p); err != nil {
		return summary{}, fmt.Errorf("#%s %v > %v undecodable: %w", frame, m.Src, m.Dst, err)
	}
	env := packet.Envelope{Src: m.Src, Dst: m.Dst}
	if m.Src.Addr().Unmap().Is4() {
		env.IPFlags = packet.IPv4DontFragment
	}
	bth := p.BTH()
	s := summary{opcode: bth.Opcode(), dqpn: bth.DestQP(), psn: bth.PSN()}
	var b strings.Builder
	fmt.Fprintf(&b, "#%s %v > %v %v dqpn=0x%06x psn=%d", frame, m.Src, m.Dst, s.opcode, s.dqpn, s.psn)
	for _, f := range []struct {
		set  bool
		name string
	}{{bth.AckReq(), "ackreq"}, {bth.SolicitedEvent(), "se"}, {bth.MigReq(), "migreq"}, {bth.FECN(), "fecn"}, {bth.BECN(), "becn"}} {
		if f.set {
			b.WriteString(" " + f.name)
		}
	}
	if h := p.DETH(); h != nil {
		fmt.Fprintf(&b, " qkey=0x%08x srcqp=0x%06x", h.QKey(), h.SrcQP())
	}
	if h := p.RETH(); h != nil {
		fmt.Fprintf(&b, " va=0x%016x rkey=0x%08x dmalen=%d", h.VirtualAddress(), h.RKey(), h.DMALength())
		if s.opcode.Kind() == packet.KindRDMAReadRequest {
			s.dmaLen = h.DMALength()
		}
	}
	if h := p.AtomicETH(); h != nil {
		fmt.Fprintf(&b, " va=0x%016x rkey=0x%08x", h.VirtualAddress(), h.RKey())
		if s.opcode.Kind() == packet.KindFetchAdd {
			fmt.Fprintf(&b, " add=%d", h.SwapAddData())
		} else {
			fmt.Fprintf(&b, " swap=%d compare=%d", h.SwapAddData(), h.CompareData())
		}
	}
	if h := p.AETH(); h != nil {
		s.syndrome, s.hasAETH = h.Syndrome(), true
		fmt.Fprintf(&b, " syndrome=%s msn=%d", syndromeText(s.syndrome), h.MSN())
	}
	if h := p.AtomicAckETH(); h != nil {
		fmt.Fprintf(&b, " orig=%d", h.OriginalRemoteData())
	}
	if h := p.ImmDt(); h != nil {
		fmt.Fprintf(&b, " imm=0x%08x", h.ImmediateData())
	}
	if h := p.IETH(); h != nil {
		fmt.Fprintf(&b, " invrkey=0x%08x", h.RKey())
	}
	icrc := "ok"
	switch err := env.VerifyICRC(m.Buf); {
	case err == nil:
		s.icrcOK = true
	case errors.Is(err, packet.ErrBadICRC):
		icrc = "BAD"
	default:
		icrc = "unchecked"
	}
	fmt.Fprintf(&b, " len=%d icrc=%s", len(p.Payload()), icrc)
	s.line = b.String()
	return s, nil
}

// syndromeText names an AETH syndrome as gorxe dump does: ACK (unlimited credits), an ACK with
// its credit count, an RNR NAK with the wait it asks for, or the NAK's name.
func syndromeText(s packet.Syndrome) string {
	switch s.Type() {
	case packet.SyndromeTypeACK:
		if s == packet.SyndromeACKUnlimited {
			return "ACK"
		}
		return fmt.Sprintf("ACK(credits=%d)", s.Value())
	case packet.SyndromeTypeRNRNAK:
		us := packet.RNRTimer(s.Value()).Microseconds()
		ms := strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%d.%02d", us/1000, us%1000/10), "0"), ".")
		return fmt.Sprintf("RNR_NAK(%sms)", ms)
	}
	return s.String()
}
