package dump

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Format selects how Run prints packets.
type Format uint8

// Output formats.
const (
	FormatLine    Format = iota // one line per packet (Packet.Line)
	FormatVerbose               // every field explained (Packet.WriteVerbose)
	FormatJSON                  // one JSON object per line (Packet.Record)
)

// Stats counts what Run saw.
type Stats struct {
	Frames  int // frames read from the capture
	RoCE    int // RoCEv2 packets printed
	Bad     int // frames reported as undecodable
	BadICRC int // RoCEv2 packets whose ICRC did not match
}

// Run prints the RoCEv2 packets of the capture in to out in format f, and
// reports frames it cannot decode to errOut, one line each, going on with
// the next frame. Non-RoCE frames are skipped silently. It returns an error
// only if the capture itself cannot be read (ErrNotCapture, or
// ErrTruncatedCapture after printing every frame before the cut) or out
// fails.
func Run(out, errOut io.Writer, in io.Reader, f Format) (Stats, error) {
	var st Stats
	r, err := NewReader(in)
	if err != nil {
		return st, err
	}
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	d := NewDecoder()
	reported := map[string]bool{} // unsupported link types, reported once
	for {
		fr, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if ferr := w.Flush(); ferr != nil {
				return st, ferr
			}
			return st, err
		}
		st.Frames++
		p, err := d.Decode(fr)
		if errors.Is(err, ErrNotRoCE) {
			continue
		}
		if err != nil {
			st.Bad++
			var fe *FrameError
			if errors.As(err, &fe) && errors.Is(err, ErrUnsupportedLinkType) {
				if reported[fe.Header] {
					continue
				}
				reported[fe.Header] = true
			}
			// Flush first so the report lands next to the packets around it.
			if err := w.Flush(); err != nil {
				return st, err
			}
			fmt.Fprintln(errOut, err)
			continue
		}
		st.RoCE++
		if p.ICRCErr != nil {
			st.BadICRC++
		}
		switch f {
		case FormatVerbose:
			if st.RoCE > 1 {
				w.WriteByte('\n')
			}
			err = p.WriteVerbose(w)
		case FormatJSON:
			err = enc.Encode(p.Record())
		default:
			_, err = fmt.Fprintln(w, p.Line())
		}
		if err != nil {
			return st, err
		}
	}
	return st, w.Flush()
}
