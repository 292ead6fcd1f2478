package trace

import (
	"fmt"
	"strings"

	"github.com/gorxe/gorxe/packet"
)

// Style is the colour class of an arrow: what kind of packet it is.
type Style uint8

// Styles. Acknowledgements are coloured by their syndrome so that NAKs stand out in a run of
// ACKs.
const (
	StyleRequest  Style = iota // SEND, WRITE, READ request, atomics
	StyleResponse              // READ responses
	StyleACK                   // ACKNOWLEDGE and ATOMIC_ACKNOWLEDGE with a positive syndrome
	StyleNAKSeq                // NAK: PSN sequence error (the receiver saw a gap)
	StyleRNR                   // RNR NAK: no receive posted
	StyleNAK                   // the other NAKs: invalid request, remote access or operational error
	StyleCNP                   // congestion notification
)

// class returns the CSS class of s, which the SVG's style sheet colours.
func (s Style) class() string {
	return [...]string{"req", "resp", "ack", "nakseq", "rnr", "nak", "cnp"}[s]
}

// styleOf returns the colour class of p.
func styleOf(p *Packet) Style {
	switch k := p.Opcode.Kind(); {
	case k == packet.KindCNP:
		return StyleCNP
	case k == packet.KindAcknowledge || k == packet.KindAtomicAcknowledge:
		switch p.Syndrome.Type() {
		case packet.SyndromeTypeACK:
			return StyleACK
		case packet.SyndromeTypeRNRNAK:
			return StyleRNR
		case packet.SyndromeTypeNAK:
			if p.Syndrome == packet.SyndromeNAKPSNSequenceError {
				return StyleNAKSeq
			}
		}
		return StyleNAK
	case p.Opcode.IsResponse():
		return StyleResponse
	}
	return StyleRequest
}

// syndromeName names an AETH syndrome for a label: "ACK", "ACK(credits=3)",
// "RNR_NAK(640µs)", "NAK_PSN_SEQUENCE_ERROR".
func syndromeName(s packet.Syndrome) string {
	switch s.Type() {
	case packet.SyndromeTypeACK:
		if s == packet.SyndromeACKUnlimited {
			return "ACK"
		}
		return fmt.Sprintf("ACK(credits=%d)", s.Value())
	case packet.SyndromeTypeRNRNAK:
		return fmt.Sprintf("RNR_NAK(%v)", packet.RNRTimer(s.Value()))
	}
	return s.String()
}

// Label returns the text written on p's arrow: opcode, PSN, payload length (the DMA length of
// a READ request), the AETH syndrome if any, the ICRC if wrong, the mark, and "lost" if fault
// injection dropped it.
//
//	RC_ACKNOWLEDGE psn=6186380 len=0 ACK
func Label(p *Packet) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v psn=%d", p.Opcode, p.PSN)
	if p.Opcode.Kind() == packet.KindRDMAReadRequest {
		fmt.Fprintf(&b, " dmalen=%d", p.DMALen)
	} else {
		fmt.Fprintf(&b, " len=%d", p.Len)
	}
	if p.HasAETH {
		b.WriteString(" " + syndromeName(p.Syndrome))
	}
	if !p.ICRCOK {
		b.WriteString(" BAD-ICRC")
	}
	var tags []string
	if p.Mark != MarkNone {
		tags = append(tags, p.Mark.String())
	}
	if p.Lost {
		tags = append(tags, "lost")
	}
	if tags != nil {
		fmt.Fprintf(&b, " [%s]", strings.Join(tags, ", "))
	}
	return b.String()
}
