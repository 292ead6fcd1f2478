package dump

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gorxe/gorxe/netio"
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
	Frames   int // frames read from the capture
	RoCE     int // RoCEv2 packets printed
	Bad      int // frames reported as undecodable
	BadICRC  int // RoCEv2 packets printed whose ICRC did not match
	Dropped  int // RoCEv2 packets printed that fault injection dropped (they never reached the network)
	Filtered int // RoCEv2 packets the filter left out
	OtherUDP int // UDP datagrams on ports that do not carry RoCEv2
}

// Run prints the RoCEv2 packets of the capture in to out in format f; it is
// RunOptions with only a format.
func Run(out, errOut io.Writer, in io.Reader, f Format) (Stats, error) {
	return RunOptions(out, errOut, in, Options{Format: f})
}

// RunOptions prints the RoCEv2 packets of the capture in to out as o says,
// and reports frames it cannot decode to errOut, one line each, going on with
// the next frame. Non-RoCE frames are skipped; if the capture holds no RoCEv2
// packet at all, or none the filter keeps, a line on errOut says so and what
// the capture held instead. It returns an error only if the capture itself
// cannot be read (ErrNotCapture, or ErrTruncatedCapture after printing every
// frame before the cut) or out fails.
func RunOptions(out, errOut io.Writer, in io.Reader, o Options) (Stats, error) {
	var st Stats
	r, err := NewReader(in)
	if err != nil {
		return st, err
	}
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	d := NewDecoder()
	for _, p := range o.Ports {
		d.AddPort(p)
	}
	if o.DetectPorts {
		d.DetectPorts()
	}
	var (
		reported = map[string]bool{} // unsupported link types, reported once
		udpPorts = map[uint16]int{}  // destination ports of UDP that is not RoCE
		noted    int                 // ports of r.Ports() given to d
		base     time.Time           // time of the first frame
	)
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
		for _, p := range r.Ports()[noted:] {
			d.AddPort(p)
		}
		noted = len(r.Ports())
		if st.Frames == 0 {
			base = fr.Time
		}
		st.Frames++
		learnt := len(d.Detected())
		p, err := d.Decode(fr)
		if len(d.Detected()) > learnt {
			if err := w.Flush(); err != nil {
				return st, err
			}
			fmt.Fprintf(errOut, "frame %d: RoCEv2 on UDP port %d (its ICRC verifies); decoding that port as RoCEv2 from here on\n",
				fr.Index, d.Detected()[learnt])
		}
		if errors.Is(err, ErrNotRoCE) {
			if d.sawUDP {
				st.OtherUDP++
				udpPorts[uint16(d.udp.DstPort)]++
			}
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
		if !o.Filter.Match(p) {
			st.Filtered++
			continue
		}
		st.RoCE++
		if p.ICRCErr != nil {
			st.BadICRC++
		}
		if p.Fault.Base() == netio.Lost {
			st.Dropped++
		}
		head := p.Line()
		if o.Time != TimeNone {
			// The time goes after the frame number, as in tshark's columns.
			num, rest, _ := strings.Cut(head, " ")
			head = num + " " + o.Time.stamp(p.Time, base) + " " + rest
		}
		switch o.Format {
		case FormatVerbose:
			if st.RoCE > 1 {
				w.WriteByte('\n')
			}
			err = p.writeVerbose(w, head)
		case FormatJSON:
			err = enc.Encode(p.Record())
		default:
			_, err = fmt.Fprintln(w, head)
		}
		if err != nil {
			return st, err
		}
	}
	if err := w.Flush(); err != nil {
		return st, err
	}
	if st.RoCE == 0 {
		fmt.Fprintln(errOut, emptySummary(st, udpPorts, d.Ports(), o.DetectPorts))
	}
	return st, nil
}

// emptySummary says why a dump printed nothing: what the capture held, and
// which ports RoCEv2 was looked for on.
func emptySummary(st Stats, udpPorts map[uint16]int, roce []uint16, detect bool) string {
	if st.Filtered > 0 {
		return fmt.Sprintf("no packet matches the filter: the capture holds %s, none of them selected", count(st.Filtered, "RoCEv2 packet"))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "no RoCEv2 packets in %s", count(st.Frames, "frame"))
	switch {
	case st.Frames == 0:
	case st.OtherUDP == 0:
		b.WriteString(", none of them UDP")
	default:
		fmt.Fprintf(&b, ": %d UDP, to port", st.OtherUDP)
		if len(udpPorts) > 1 {
			b.WriteString("s")
		}
		// The busiest ports first: RoCE on an unexpected port is a lot of
		// datagrams to one port.
		ports := slices.SortedFunc(maps.Keys(udpPorts), func(a, b uint16) int {
			return cmp.Or(udpPorts[b]-udpPorts[a], int(a)-int(b))
		})
		for i, p := range ports {
			if i == 8 {
				fmt.Fprintf(&b, " and %d more", len(ports)-i)
				break
			}
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, " %d (%d)", p, udpPorts[p])
		}
	}
	b.WriteString("; RoCEv2 was looked for on UDP port")
	if len(roce) > 1 {
		b.WriteString("s")
	}
	for i, p := range roce {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(" " + strconv.Itoa(int(p)))
	}
	if detect {
		b.WriteString(" and on any port a packet with a verified ICRC was sent to")
	}
	return b.String()
}

// count writes n and noun, plural unless n is 1.
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
