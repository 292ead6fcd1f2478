package trace

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"strings"
	"time"
)

// styleSheet colours the diagram. It is inside the SVG so the image stands alone.
const styleSheet = `
text { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 11px; fill: #222; }
.lane { stroke: #999; stroke-width: 1; }
.lane-name { font-weight: bold; font-size: 12px; }
.t { fill: #777; }
.arrow { stroke-width: 1.4; fill: none; }
.hit { stroke: transparent; stroke-width: 12; fill: none; }
.pkt { cursor: pointer; }
.pkt:hover .arrow { stroke-width: 3; }
.retx .arrow { stroke-dasharray: 7 3; }
.dup .arrow { stroke-dasharray: 2 3; }
.fill .arrow { stroke-dasharray: 10 2 2 2; }
.pkt.retx .label, .pkt.dup .label, .pkt.fill .label, .pkt.badicrc .label { font-weight: bold; }
.req .arrow, .head-req { stroke: #1f4e9c; fill: #1f4e9c; }
.resp .arrow, .head-resp { stroke: #0b7a75; fill: #0b7a75; }
.ack .arrow, .head-ack { stroke: #2e8b2e; fill: #2e8b2e; }
.nakseq .arrow, .head-nakseq { stroke: #d62728; fill: #d62728; }
.rnr .arrow, .head-rnr { stroke: #e67e00; fill: #e67e00; }
.nak .arrow, .head-nak { stroke: #8b008b; fill: #8b008b; }
.cnp .arrow, .head-cnp { stroke: #666; fill: #666; }
.req .label { fill: #1f4e9c; } .resp .label { fill: #0b7a75; } .ack .label { fill: #2e7d2e; }
.nakseq .label { fill: #c01010; } .rnr .label { fill: #b35f00; } .nak .label { fill: #8b008b; }
.band rect { fill: #e8eef8; stroke: #1f4e9c; stroke-width: 1; rx: 4; }
.band.resp rect { fill: #e4f3f2; stroke: #0b7a75; }
.band .label { font-weight: bold; }
.band { cursor: pointer; }
.loss line { stroke: #d62728; stroke-width: 1.4; stroke-dasharray: 3 3; }
.loss .label, .loss .x, .lost .x { fill: #d62728; font-weight: bold; }
.loss .x, .lost .x { font-size: 16px; }
.gap rect { fill: #f2f2f2; stroke: #bbb; stroke-dasharray: 4 3; }
.gap .label, .gap .again { fill: #555; font-style: italic; }
`

// writeSVG draws d. With members set, each band also carries its packets' arrows, hidden,
// for the HTML page to show when the band is clicked.
func writeSVG(w io.Writer, d *Diagram, members bool) error {
	bw := bufio.NewWriter(w)
	s := &svg{w: bw, d: d}
	// The data- attributes keep the collapsed geometry for the HTML page's script.
	s.printf(`<svg xmlns="http://www.w3.org/2000/svg" id="ladder" width="%g" height="%g" viewBox="0 0 %g %g" data-w="%g" data-h="%g">`+"\n",
		d.Width, d.Height, d.Width, d.Height, d.Width, d.Height)
	s.printf("<style>%s</style>\n", styleSheet)
	s.defs()
	s.lanes()
	s.printf(`<g id="rows">` + "\n")
	for i := range d.Rows {
		s.row(&d.Rows[i], members)
	}
	s.printf("</g>\n</svg>\n")
	return bw.Flush() // bufio keeps the first write error
}

type svg struct {
	w *bufio.Writer
	d *Diagram
}

func (s *svg) printf(format string, args ...any) { fmt.Fprintf(s.w, format, args...) }

// defs declares one arrowhead per style, coloured by the style sheet, sized in pixels so a
// highlighted (thicker) arrow keeps its head.
func (s *svg) defs() {
	s.printf("<defs>\n")
	for st := StyleRequest; st <= StyleCNP; st++ {
		s.printf(`<marker id="head-%s" viewBox="0 0 10 10" refX="10" refY="5" markerUnits="userSpaceOnUse" markerWidth="9" markerHeight="9" orient="auto-start-reverse">`+
			`<path class="head-%s" d="M0,0 L10,5 L0,10 z"/></marker>`+"\n", st.class(), st.class())
	}
	s.printf("</defs>\n")
}

// names writes the time column's heading and each endpoint's address and QPN.
func (s *svg) names() {
	d := s.d
	s.key()
	s.printf(`<text class="lane-name" x="%g" y="%g" text-anchor="end">time (s)</text>`+"\n", timeColumn-12, namesY+16)
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
	s.printf(`<g id="key">`)
	for _, k := range keyEntries {
		head := strings.Fields(k.class)[0]
		s.printf(`<g class="%s"><line class="arrow" x1="%g" y1="%g" x2="%g" y2="%g" marker-end="url(#head-%s)"/>`, k.class, x, keyY-4, x+28, keyY-4, head)
		s.printf(`<text class="key-label" x="%g" y="%g">%s</text></g>`, x+34, keyY, k.text)
		x += 48 + 7*float64(len(k.text))
	}
	s.printf(`<g class="lost"><text class="x" x="%g" y="%g">✕</text><text class="key-label" x="%g" y="%g">lost</text></g>`, x, keyY+2, x+16, keyY)
	s.printf("</g>\n")
}

// lanes draws the endpoints' names and vertical lines.
func (s *svg) lanes() {
	d := s.d
	s.printf(`<g id="lanes">` + "\n")
	s.names()
	for _, e := range d.Lanes {
		x := d.x(e)
		y2 := d.Height - footerH/2
		s.printf(`<line class="lane" x1="%g" y1="%g" x2="%g" y2="%g" data-y2="%g"/>`+"\n", x, headerH-16, x, y2, y2)
	}
	s.printf("</g>\n")
}

func (s *svg) row(r *Row, members bool) {
	s.printf(`<g class="row" transform="translate(0,%g)" data-y="%g" data-h="%g"`, r.Y, r.Y, r.Height)
	if r.Kind == RowBand && members {
		s.printf(` data-hx="%g"`, r.Height+packetH*float64(len(r.Packets)))
	}
	s.printf(">")
	switch r.Kind {
	case RowPacket:
		s.timeLabel(r.Packets[0], 17)
		s.arrow(r.Packets[0], 0)
	case RowBand:
		s.band(r, members)
	case RowLoss:
		s.loss(&r.Loss)
	case RowGap:
		s.gap(r.Silence)
	}
	s.printf("</g>\n")
}

func (s *svg) timeLabel(i int, y float64) {
	t := s.d.Packets[i].Time.Sub(s.d.Start)
	s.printf(`<text class="t" x="%g" y="%g" text-anchor="end">%.6f</text>`, timeColumn-12, y, t.Seconds())
}

// arrow draws packet i's arrow with its top at y.
func (s *svg) arrow(i int, y float64) {
	p := &s.d.Packets[i]
	st := styleOf(p).class()
	cls := "pkt " + st
	switch p.Mark {
	case MarkRetransmit:
		cls += " retx"
	case MarkDuplicate:
		cls += " dup"
	case MarkFill:
		cls += " fill"
	}
	if !p.ICRCOK {
		cls += " badicrc"
	}
	x1, x2 := s.d.x(p.Src), s.d.x(p.Dst)
	s.printf(`<g class="%s" data-frame="%d"><title>%s</title>`, cls, p.Frame, esc(p.Summary))
	if x1 == x2 { // a QP talking to itself: a loop out and back
		path := fmt.Sprintf("M%g,%g h50 v6 h-50", x1, y+12)
		s.printf(`<path class="hit" d="%s"/><path class="arrow" d="%s" marker-end="url(#head-%s)"/>`, path, path, st)
		s.printf(`<text class="label" x="%g" y="%g">%s</text></g>`, x1+56, y+17, esc(Label(p)))
		return
	}
	s.printf(`<line class="hit" x1="%g" y1="%g" x2="%g" y2="%g"/>`, x1, y+14, x2, y+20)
	s.printf(`<line class="arrow" x1="%g" y1="%g" x2="%g" y2="%g" marker-end="url(#head-%s)"/>`, x1, y+14, x2, y+20, st)
	s.printf(`<text class="label" x="%g" y="%g" text-anchor="middle">%s</text></g>`, (x1+x2)/2, y+10, esc(Label(p)))
}

// BandLabel returns the text of a band of packets: the opcode, how many, the PSNs of the
// first and last, and the bytes they carry.
//
//	RC_RDMA_WRITE_MIDDLE ×14 psn=100..113 len=14336
func BandLabel(pkts []Packet, run []int) string {
	first, last := &pkts[run[0]], &pkts[run[len(run)-1]]
	bytes := 0
	for _, i := range run {
		bytes += pkts[i].Len
	}
	return fmt.Sprintf("%v ×%d psn=%d..%d len=%d", first.Opcode, len(run), first.PSN, last.PSN, bytes)
}

func (s *svg) band(r *Row, members bool) {
	d := s.d
	first := &d.Packets[r.Packets[0]]
	x1, x2 := d.x(first.Src), d.x(first.Dst)
	lo, hi := min(x1, x2), max(x1, x2)
	if lo == hi {
		hi = lo + 50
	}
	st := styleOf(first).class()
	s.timeLabel(r.Packets[0], 20)
	s.printf(`<g class="band %s" data-first="%d" data-count="%d">`, st, first.Frame, len(r.Packets))
	s.printf(`<rect x="%g" y="4" width="%g" height="%g"/>`, lo, hi-lo, bandH-8)
	s.printf(`<line class="arrow" x1="%g" y1="24" x2="%g" y2="24" stroke-width="3" marker-end="url(#head-%s)"/>`, x1, x2, st)
	s.printf(`<text class="label" x="%g" y="18" text-anchor="middle">%s</text></g>`, (x1+x2)/2, esc(BandLabel(d.Packets, r.Packets)))
	if !members {
		return
	}
	s.printf(`<g class="members" display="none">`)
	for k, i := range r.Packets {
		y := bandH + packetH*float64(k)
		s.timeLabel(i, y+17)
		s.arrow(i, y)
	}
	s.printf("</g>")
}

// LossLabel returns the text of a loss: the PSNs skipped.
func LossLabel(l *Loss) string {
	if l.First == l.Last {
		return fmt.Sprintf("lost psn=%d", l.First)
	}
	return fmt.Sprintf("lost psn=%d..%d (%d)", l.First, l.Last, l.Last.Diff(l.First)+1)
}

func (s *svg) loss(l *Loss) {
	x1, x2 := s.d.x(l.Src), s.d.x(l.Dst)
	end := x1 + (x2-x1)*0.55
	s.printf(`<g class="loss"><line x1="%g" y1="14" x2="%g" y2="17"/>`, x1, end)
	s.printf(`<text class="x" x="%g" y="21" text-anchor="middle">✕</text>`, end)
	s.printf(`<text class="label" x="%g" y="10" text-anchor="middle">%s</text></g>`, (x1+end)/2, esc(LossLabel(l)))
}

// GapLabel returns the text of a break in time.
func GapLabel(silence time.Duration) string {
	return fmt.Sprintf("%s without packets", silence.Round(time.Millisecond))
}

// gapLabelEvery is how far apart a break's label repeats across a wide diagram, so that one
// is in view wherever the reader has scrolled to.
const gapLabelEvery = 4 * laneSpacing

func (s *svg) gap(silence time.Duration) {
	s.printf(`<g class="gap"><rect x="0" y="6" width="%g" height="%g"/>`, s.d.Width, gapH-12)
	s.printf(`<text class="label" x="12" y="%g">%s</text>`, gapH/2+4, esc(GapLabel(silence)))
	for x := 12 + gapLabelEvery; x < s.d.Width-gapLabelEvery/2; x += gapLabelEvery {
		s.printf(`<text class="again" x="%g" y="%g">%s</text>`, x, gapH/2+4, esc(GapLabel(silence)))
	}
	s.printf("</g>")
}

func esc(s string) string { return html.EscapeString(s) }

// writeNames draws just the heading of d, the lane names, as an SVG of its own: the HTML page
// keeps it at the top of the view while the ladder scrolls under it.
func writeNames(w io.Writer, d *Diagram) error {
	bw := bufio.NewWriter(w)
	s := &svg{w: bw, d: d}
	s.printf(`<svg xmlns="http://www.w3.org/2000/svg" id="names" width="%g" height="%g">`, d.Width, headerH-20)
	s.printf("<style>%s</style>\n", styleSheet)
	s.names()
	s.printf("</svg>\n")
	return bw.Flush()
}
