package dump

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gorxe/gorxe/packet"
)

// Line returns the one-line summary of p:
//
//	#12 10.99.0.3:49441 > 10.99.0.2:4791 RC_SEND_FIRST dqpn=0x000011 psn=6186377 len=1024 icrc=ok
//
// with the BTH flags that are set and the key fields of each extension header
// between the PSN and the payload length.
func (p *Packet) Line() string {
	var b strings.Builder
	bth := &p.BTH.BTHFields
	fmt.Fprintf(&b, "#%d %v > %v %v dqpn=0x%06x psn=%d", p.Frame, p.Src, p.Dst, bth.Opcode, bth.DestQP, bth.PSN)
	for _, f := range []struct {
		set  bool
		name string
	}{{bth.AckReq, "ackreq"}, {bth.SolicitedEvent, "se"}, {bth.MigReq, "migreq"}, {bth.FECN, "fecn"}, {bth.BECN, "becn"}} {
		if f.set {
			b.WriteString(" " + f.name)
		}
	}
	if h := p.RDETH; h != nil {
		fmt.Fprintf(&b, " eecnxt=0x%06x", h.EEContext)
	}
	if h := p.DETH; h != nil {
		fmt.Fprintf(&b, " qkey=0x%08x srcqp=0x%06x", h.QKey, h.SrcQP)
	}
	if h := p.FETH; h != nil {
		fmt.Fprintf(&b, " placement=%d selectivity=%d", h.PlacementType, h.Selectivity)
	}
	if h := p.RETH; h != nil {
		fmt.Fprintf(&b, " va=0x%016x rkey=0x%08x dmalen=%d", h.VirtualAddress, h.RKey, h.DMALength)
	}
	if h := p.AtomicETH; h != nil {
		fmt.Fprintf(&b, " va=0x%016x rkey=0x%08x", h.VirtualAddress, h.RKey)
		if bth.Opcode.Kind() == packet.KindFetchAdd {
			fmt.Fprintf(&b, " add=%d", h.SwapAddData)
		} else {
			fmt.Fprintf(&b, " swap=%d compare=%d", h.SwapAddData, h.CompareData)
		}
	}
	if h := p.AETH; h != nil {
		fmt.Fprintf(&b, " syndrome=%s msn=%d", syndromeShort(h.Syndrome), h.MSN)
	}
	if h := p.AtomicAckETH; h != nil {
		fmt.Fprintf(&b, " orig=%d", h.OriginalRemoteData)
	}
	if h := p.ImmDt; h != nil {
		fmt.Fprintf(&b, " imm=0x%08x", h.ImmediateData)
	}
	if h := p.IETH; h != nil {
		fmt.Fprintf(&b, " invrkey=0x%08x", h.RKey)
	}
	fmt.Fprintf(&b, " len=%d icrc=%s", len(p.Payload), icrcShort(p.ICRCErr))
	return b.String()
}

// syndromeShort names an AETH syndrome compactly: ACK, RNR_NAK with its
// timer, or the NAK code's name.
func syndromeShort(s packet.Syndrome) string {
	switch s.Type() {
	case packet.SyndromeTypeACK:
		if s == packet.SyndromeACKUnlimited {
			return "ACK"
		}
		return fmt.Sprintf("ACK(credits=%d)", s.Value())
	case packet.SyndromeTypeRNRNAK:
		return fmt.Sprintf("RNR_NAK(%sms)", rnrTimerMillis(s.Value()))
	}
	return s.String()
}

func icrcShort(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, packet.ErrBadICRC):
		return "BAD"
	}
	return "unchecked"
}

// rnrTimerMillis returns the RNR timer of code c in milliseconds, as text
// without trailing zeros ("0.64", "655.36").
func rnrTimerMillis(c uint8) string {
	us := packet.RNRTimer(c).Microseconds()
	s := fmt.Sprintf("%d.%02d", us/1000, us%1000/10)
	return strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
}
