package dump

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gorxe/gorxe/packet"
)

// Options says what RunOptions prints and how.
type Options struct {
	Format Format
	// Ports are UDP ports that carry RoCEv2 besides 4791. A pcapng capture
	// can announce its own (see capture.PortNote).
	Ports []uint16
	// DetectPorts learns the ports of RoCEv2 packets whose ICRC verifies
	// (see Decoder.DetectPorts), and reports each port learnt on errOut.
	DetectPorts bool
	// Time puts each packet's capture time after its frame number in line
	// and verbose output. JSON records carry frame numbers only.
	Time TimeFormat
	// Filter selects the packets printed.
	Filter Filter
}

// TimeFormat says how packet times are shown.
type TimeFormat uint8

// Time formats.
const (
	TimeNone     TimeFormat = iota // no time
	TimeRelative                   // seconds since the capture's first frame, like tshark's default
	TimeAbsolute                   // UTC date and time of day
)

// stamp formats t, a frame of a capture whose first frame is from base.
func (tf TimeFormat) stamp(t, base time.Time) string {
	switch tf {
	case TimeRelative:
		d := t.Sub(base)
		sign := ""
		if d < 0 { // captures merged out of order
			sign, d = "-", -d
		}
		us := d.Microseconds()
		return fmt.Sprintf("%s%d.%06d", sign, us/1e6, us%1e6)
	case TimeAbsolute:
		return t.UTC().Format("2006-01-02T15:04:05.000000Z")
	}
	return ""
}

// Filter selects RoCEv2 packets. Its zero value selects every packet.
type Filter struct {
	// QPs keeps the packets to one of these queue pairs (BTH DestQP) and
	// the datagrams from one (DETH Source QP); empty keeps all.
	QPs []uint32
	// Opcodes keeps the packets with one of these opcodes; empty keeps all.
	Opcodes []packet.Opcode
}

// Match reports whether p passes f.
func (f *Filter) Match(p *Packet) bool {
	if len(f.Opcodes) > 0 && !slices.Contains(f.Opcodes, p.BTH.Opcode) {
		return false
	}
	if len(f.QPs) == 0 || slices.Contains(f.QPs, p.BTH.DestQP) {
		return true
	}
	if d := p.Header(packet.HeaderDETH); d != nil {
		return slices.Contains(f.QPs, packet.DETH(d).SrcQP())
	}
	return false
}

// ParseOpcodes reads a comma-separated list of opcodes, each named by its
// number (20, 0x14), its full name (RC_FETCH_ADD), its operation on every
// transport (SEND_ONLY: RC_SEND_ONLY, UC_SEND_ONLY and UD_SEND_ONLY), or
// its kind (SEND: every SEND opcode; ACKNOWLEDGE, RDMA_READ_RESPONSE, ...).
// Names are case-insensitive. It returns ErrBadFilter for an element that
// names no defined opcode.
func ParseOpcodes(list string) ([]packet.Opcode, error) {
	var ops []packet.Opcode
	for item := range strings.SplitSeq(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, fmt.Errorf("%w: empty opcode in %q", ErrBadFilter, list)
		}
		n := len(ops)
		if v, err := strconv.ParseUint(item, 0, 8); err == nil {
			if op := packet.Opcode(v); op.Valid() {
				ops = append(ops, op)
			}
		} else {
			for i := range 256 {
				op := packet.Opcode(i)
				if !op.Valid() {
					continue
				}
				name := op.String()
				_, operation, _ := strings.Cut(name, "_")
				if strings.EqualFold(item, name) || strings.EqualFold(item, operation) || strings.EqualFold(item, op.Kind().String()) {
					ops = append(ops, op)
				}
			}
		}
		if len(ops) == n {
			return nil, fmt.Errorf("%w: %q names no opcode", ErrBadFilter, item)
		}
	}
	slices.Sort(ops)
	return slices.Compact(ops), nil
}
