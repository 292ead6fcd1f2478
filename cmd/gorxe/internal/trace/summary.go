package trace

import (
	"fmt"
	"strings"
)

// Summary returns one line counting what the diagram shows, for the top of the HTML page
// and the command's report; a packet that fills a gap counts as a retransmission (its first
// copy was lost), and the losses are the packets fault injection dropped (a gorxe capture
// keeps them, marked) and the gaps later packets filled:
//
//	2540 packets, 52 endpoints: 3 retransmissions, 2 duplicates, 0 losses, 0 NAKs, 0 RNR NAKs
func (d *Diagram) Summary() string {
	var retx, dup, naks, rnr, losses int
	for i := range d.Packets {
		p := &d.Packets[i]
		switch p.Mark {
		case MarkRetransmit, MarkFill:
			retx++
		case MarkDuplicate:
			dup++
		}
		if p.Lost {
			losses++
		}
		switch styleOf(p) {
		case StyleNAKSeq, StyleNAK:
			naks++
		case StyleRNR:
			rnr++
		}
	}
	for i := range d.Rows {
		if d.Rows[i].Kind == RowLoss {
			losses++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s, %s: %s, %s, %s, %s, %s",
		count(len(d.Packets), "packet"), count(len(d.Lanes), "endpoint"), count(retx, "retransmission"),
		count(dup, "duplicate"), count(losses, "loss"), count(naks, "NAK"), count(rnr, "RNR NAK"))
	if d.Undecodable > 0 {
		fmt.Fprintf(&b, " (%s left out)", count(d.Undecodable, "undecodable frame"))
	}
	return b.String()
}

// count writes n things, with the plural English takes for the nouns here.
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "ss") {
		return fmt.Sprintf("%d %ses", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
