package trace

import (
	"bufio"
	"errors"
	"io"
	"os"
)

// Build reads a capture and lays out its ladder. With explain set, every packet keeps its
// verbose decoding for the HTML page. It returns a *CaptureError for an unreadable capture and
// ErrNoPackets when nothing is left to draw.
func Build(r io.Reader, o Options, explain bool) (*Diagram, error) {
	c, err := read(r, explain)
	if err != nil {
		return nil, err
	}
	resolveEndpoints(c.packets)
	pkts := filter(c.packets, o)
	if len(pkts) == 0 {
		return nil, ErrNoPackets
	}
	losses := classify(pkts)
	return layout(pkts, losses, o), nil
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

// Run draws the capture o.Input into o.Output (standard output if empty).
func Run(o Options, stdout io.Writer) (err error) {
	in, err := os.Open(o.Input)
	if err != nil {
		return err
	}
	defer in.Close()
	d, err := Build(bufio.NewReader(in), o, o.Format == FormatHTML)
	if err != nil {
		return err
	}
	if o.Output == "" {
		return Write(stdout, d, o.Format)
	}
	out, err := os.Create(o.Output)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, out.Close()) }()
	return Write(out, d, o.Format)
}
