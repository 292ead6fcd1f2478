package trace

import (
	"math"
	"time"

	"github.com/gorxe/gorxe/packet"
)

// RowKind is what one row of the ladder shows.
type RowKind uint8

// Row kinds.
const (
	RowPacket RowKind = iota // one arrow
	RowBand                  // a run of MIDDLE packets of one message, collapsed
	RowLoss                  // PSNs a sender skipped and later filled in
	RowGap                   // a silence longer than Options.Gap
)

// Row is one row of the ladder, top to bottom.
type Row struct {
	Kind    RowKind
	Packets []int         // indices into Diagram.Packets: the arrow's, or the band's run
	Loss    Loss          // RowLoss
	Silence time.Duration // RowGap: how long nothing was captured
	Y       float64       // top of the row
	Height  float64       // collapsed height
}

// Diagram is a laid-out ladder: lanes left to right, rows top to bottom.
type Diagram struct {
	Packets []Packet
	Lanes   []Endpoint
	Rows    []Row
	Start   time.Time // the capture's first RoCE packet; rows show time since
	Width   float64
	Height  float64

	Title       string // names the diagram on the HTML page
	Undecodable int    // frames left out because they could not be decoded

	laneX map[Endpoint]float64
}

// Geometry, in SVG user units (pixels).
const (
	timeColumn  = 130.0 // time labels left of the first lane
	laneSpacing = 300.0
	rightMargin = 160.0  // room for the labels of arrows to the last lane, which overhang it
	minWidth    = 1200.0 // room for the key
	headerH     = 88.0   // the key and the lane names above the rows
	keyY        = 16.0   // baseline of the key
	namesY      = 44.0   // baseline of the lanes' addresses; their QPNs are one line below
	packetH     = 24.0
	bandH       = 34.0
	lossH       = 24.0
	gapH        = 36.0
	footerH     = 24.0
	maxPause    = 18.0 // the most extra space a pause shorter than the gap threshold adds
)

// layout arranges the packets, already resolved and classified, into rows.
func layout(pkts []Packet, losses []Loss, o Options) *Diagram {
	d := &Diagram{Packets: pkts, Lanes: lanes(pkts), laneX: map[Endpoint]float64{}}
	for i, e := range d.Lanes {
		d.laneX[e] = timeColumn + laneSpacing*(float64(i)+0.5)
	}
	d.Width = max(minWidth, timeColumn+laneSpacing*float64(len(d.Lanes))+rightMargin)
	lossesBefore := map[int][]Loss{}
	for _, l := range losses {
		lossesBefore[l.Before] = append(lossesBefore[l.Before], l)
	}
	y := headerH
	add := func(r Row) {
		r.Y = y
		d.Rows = append(d.Rows, r)
		y += r.Height
	}
	for i := 0; i < len(pkts); {
		if i > 0 {
			dt := pkts[i].Time.Sub(pkts[i-1].Time)
			if dt > o.Gap {
				add(Row{Kind: RowGap, Silence: dt, Height: gapH})
			} else {
				y += pause(dt)
			}
		}
		for _, l := range lossesBefore[i] {
			add(Row{Kind: RowLoss, Loss: l, Packets: []int{i}, Height: lossH})
		}
		if n := middleRun(pkts, i, o, lossesBefore); o.Collapse > 0 && n >= o.Collapse {
			run := make([]int, n)
			for k := range run {
				run[k] = i + k
			}
			add(Row{Kind: RowBand, Packets: run, Height: bandH})
			i += n
			continue
		}
		add(Row{Kind: RowPacket, Packets: []int{i}, Height: packetH})
		i++
	}
	d.Height = y + footerH
	return d
}

// pause returns the extra space between two rows dt apart, growing with the logarithm of dt
// from nothing at 100µs to maxPause at 100ms, so that the rhythm of an exchange shows without
// a linear scale that µs bursts and second-long pauses could not share.
func pause(dt time.Duration) float64 {
	if dt <= 100*time.Microsecond {
		return 0
	}
	// Whole pixels keep the coordinates short and exact.
	return math.Round(math.Min(maxPause, 6*math.Log10(float64(dt)/float64(100*time.Microsecond))))
}

// middleRun returns how many packets from i on are MIDDLE packets of one message from one
// sender, back to back: unmarked, none lost, with no loss or long silence between them.
func middleRun(pkts []Packet, i int, o Options, lossesBefore map[int][]Loss) int {
	first := &pkts[i]
	if first.Opcode.Position() != packet.PositionMiddle || first.Mark != MarkNone || first.Lost {
		return 0
	}
	n := 1
	for j := i + 1; j < len(pkts); j++ {
		p := &pkts[j]
		if p.Opcode != first.Opcode || p.Src != first.Src || p.Dst != first.Dst || p.Mark != MarkNone || p.Lost ||
			len(lossesBefore[j]) > 0 || p.Time.Sub(pkts[j-1].Time) > o.Gap {
			break
		}
		n++
	}
	return n
}

// x returns the x of e's lane.
func (d *Diagram) x(e Endpoint) float64 { return d.laneX[e] }
