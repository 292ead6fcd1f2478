package trace

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// names writes the time column's heading and each endpoint's address and QPN.
func (s *svg) names() {
	d := s.d
	s.key()
	s.printf(`<text class="lane-name t-head" x="%g" y="%g" text-anchor="end">time (s)</text>`+"\n", timeColumn-12, namesY+16)
	for _, e := range d.Lanes {
		x := d.x(e)
		qp := "QP ?"
		if e.Known {
			qp = fmt.Sprintf("QP 0x%06x", e.QPN)
		}
		s.printf(`<text class="lane-name" x="%g" y="%g" text-anchor="middle">%s</text>`, x, namesY, esc(e.Addr.String()))
		s.printf(`<text class="lane-name" x="%g" y="%g" text-anchor="middle">%s</text>`+"\n", x, namesY+16, qp)
	}
}

// keyEntries are the key's samples: a colour class, a line style class and what they mean.
var keyEntries = []struct{ class, text string }{
	{"req", "request"},
	{"resp", "READ response"},
	{"ack", "ACK"},
	{"nakseq", "NAK: PSN sequence error"},
	{"rnr", "RNR NAK"},
	{"nak", "other NAK"},
	{"req retx", "retransmission"},
	{"req dup", "duplicate"},
	{"req fill", "fills a gap"},
}

// key draws the key along the top: one short arrow per colour and line style.
func (s *svg) key() {
	x := 12.0
	s.printf(`<g class="key">`)
	for _, k := range keyEntries {
		head := strings.Fields(k.class)[0]
		s.printf(`<g class="%s"><line class="arrow" x1="%g" y1="%g" x2="%g" y2="%g" marker-end="url(#head-%s)"/>`, k.class, x, keyY-4, x+28, keyY-4, head)
		s.printf(`<text class="key-label" x="%g" y="%g">%s</text></g>`, x+34, keyY, k.text)
		x += 48 + 7*float64(len(k.text))
	}
	s.printf(`<g class="lost"><text class="x" x="%g" y="%g">✕</text><text class="key-label" x="%g" y="%g">lost</text></g>`, x, keyY+2, x+16, keyY)
	s.printf("</g>\n")
}

// writeNames draws just the heading of d, the key and the lane names, as an SVG of its own: the
// HTML page keeps it at the top of the view while the ladder scrolls under it. It has no style
// sheet: the ladder's, on the same page, applies.
func writeNames(w io.Writer, d *Diagram) error {
	bw := bufio.NewWriter(w)
	s := &svg{w: bw, d: d}
	s.printf(`<svg xmlns="http://www.w3.org/2000/svg" id="names" width="%g" height="%g">`, d.Width, headerH-20)
	s.names()
	s.printf("</svg>\n")
	return bw.Flush()
}
