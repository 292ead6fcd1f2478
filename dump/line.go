package dump

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gorxe/gorxe/packet"
)

// Line returns the one-line summary of p:
//
//	#12 10.99.0.3:49441 > 10.99.0.2:4791 RC_SEND_FIRST dqpn=0x000011 psn=6186377 len=1024 icrc=ok
//
// with the BTH flags that are set and the key fields of each extension header
// between the PSN and the payload length; a connection manager MAD to QP1 adds
// its message and connection IDs (see cmSummary). A packet gorxe's fault
// injection dropped or altered ends with a marker saying so (see Faults):
//
//	#63 127.0.0.1:49408 > 127.0.0.2:4791 RC_FETCH_ADD dqpn=0x000010 psn=16001337 ... len=0 icrc=ok [dropped by fault injector]
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
	kind := bth.Opcode.Kind()
	for _, l := range p.Ext {
		for _, f := range l.Header.Desc().Fields {
			f = f.For(kind)
			if f.Abbrev == "" {
				continue
			}
			v := f.Value(l.Contents)
			if f.Base == packet.BaseSyndrome {
				fmt.Fprintf(&b, " %s=%s", f.Abbrev, syndromeShort(packet.Syndrome(v)))
				continue
			}
			fmt.Fprintf(&b, " %s=%s", f.Abbrev, number(f, v))
		}
	}
	b.WriteString(p.cmSummary())
	fmt.Fprintf(&b, " len=%d icrc=%s", len(p.Payload), icrcShort(p.ICRCErr))
	b.WriteString(p.faultMarker())
	return b.String()
}

// number writes a field's value in its base: hexadecimal with as many
// digits as its width needs, or decimal. A syndrome is written in hex.
func number(f packet.Field, v uint64) string {
	if f.Base == packet.BaseDec {
		return strconv.FormatUint(v, 10)
	}
	return fmt.Sprintf("0x%0*x", (int(f.Width)+3)/4, v)
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
