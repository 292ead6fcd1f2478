package trace

import (
	"bufio"
	_ "embed" // the style sheet
	"fmt"
	"html"
	"io"
	"time"
)

// styleSheet colours the diagram. It is inside the SVG so the image stands alone.
//
//go:embed ladder.css
var styleSheet string

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
	if p.Lost {
		cls += " lost"
	}
	x1, x2 := s.d.x(p.Src), s.d.x(p.Dst)
	s.printf(`<g class="%s" data-frame="%d"><title>%s</title>`, cls, p.Frame, esc(p.Summary))
	if p.Lost && x1 != x2 {
		// Dropped on its way: the arrow stops short of its destination, at a cross.
		end := x1 + (x2-x1)*0.55
		s.printf(`<line class="hit" x1="%g" y1="%g" x2="%g" y2="%g"/>`, x1, y+14, end, y+17)
		s.printf(`<line class="arrow" x1="%g" y1="%g" x2="%g" y2="%g"/>`, x1, y+14, end, y+17)
		s.printf(`<text class="x" x="%g" y="%g" text-anchor="middle">✕</text>`, end, y+21)
		s.printf(`<text class="label" x="%g" y="%g" text-anchor="middle">%s</text></g>`, (x1+end)/2, y+10, esc(Label(p)))
		return
	}
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
