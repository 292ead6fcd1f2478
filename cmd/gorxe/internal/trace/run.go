package trace

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Build reads a capture and lays out its ladder. With explain set, every packet keeps its
// verbose decoding for the HTML page. It returns a *CaptureError for an unreadable capture and
// ErrNoPackets when nothing is left to draw.
func Build(r io.Reader, o Options, explain bool) (*Diagram, error) {
	c, err := read(r, explain)
	if err != nil {
		return nil, err
	}
	if len(c.packets) == 0 {
		return nil, ErrNoPackets
	}
	start := c.packets[0].Time
	resolveEndpoints(c.packets)
	pkts := filter(c.packets, o)
	// Marks and losses come from every packet of the senders kept, so a page of frames shows
	// a retransmission of a packet sent on an earlier page as one.
	losses := classify(pkts)
	pkts, losses = window(pkts, losses, o)
	if len(pkts) == 0 {
		return nil, ErrNoPackets
	}
	d := layout(pkts, losses, o)
	d.Start, d.Undecodable = start, c.bad
	return d, nil
}

// window keeps the packets of the frames -frames selects, and the losses revealed by them.
func window(pkts []Packet, losses []Loss, o Options) ([]Packet, []Loss) {
	if o.FirstFrame == 0 && o.LastFrame == 0 {
		return pkts, losses
	}
	newIndex := map[int]int{}
	var out []Packet
	for i, p := range pkts {
		if p.Frame >= o.FirstFrame && (o.LastFrame == 0 || p.Frame <= o.LastFrame) {
			newIndex[i] = len(out)
			out = append(out, p)
		}
	}
	var kept []Loss
	for _, l := range losses {
		if j, ok := newIndex[l.Before]; ok {
			l.Before = j
			kept = append(kept, l)
		}
	}
	return out, kept
}

// filter keeps the packets the -qp and -port options select. Both select whole directions of
// a connection, so the sequence of every sender kept is complete.
func filter(pkts []Packet, o Options) []Packet {
	if !o.HasQPN && !o.HasPort {
		return pkts
	}
	var out []Packet
	for _, p := range pkts {
		if o.HasQPN && !(p.Dst.QPN == o.QPN || p.Src.Known && p.Src.QPN == o.QPN) {
			continue
		}
		if o.HasPort && p.SrcPort != o.Port && p.DstPort != o.Port {
			continue
		}
		out = append(out, p)
	}
	return out
}

// Write writes d in format f.
func Write(w io.Writer, d *Diagram, f Format) error {
	if f == FormatHTML {
		return writeHTML(w, d)
	}
	return writeSVG(w, d, false)
}

// Run draws the capture o.Input into o.Output (standard output if empty). Frames that look
// like RoCE but cannot be decoded are left out and counted on stderr; `gorxe dump` says why.
func Run(o Options, stdout, stderr io.Writer) (err error) {
	in, err := os.Open(o.Input)
	if err != nil {
		return err
	}
	defer in.Close()
	d, err := Build(bufio.NewReader(in), o, o.Format == FormatHTML)
	if err != nil {
		return err
	}
	d.Title = filepath.Base(o.Input)
	if d.Undecodable > 0 {
		fmt.Fprintf(stderr, "gorxe trace: %s: %d frames could not be decoded and are not drawn (gorxe dump shows why)\n", o.Input, d.Undecodable)
	}
	if o.Output == "" {
		return Write(stdout, d, o.Format)
	}
	out, err := os.Create(o.Output)
	if err != nil {
		return err
	}
	defer func() {
		err = errors.Join(err, out.Close())
		if err == nil {
			fmt.Fprintf(stderr, "gorxe trace: wrote %s: %s\n", o.Output, d.Summary())
		}
	}()
	return Write(out, d, o.Format)
}
