package dump

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gorxe/gorxe/cm/mad"
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
	// Opcodes keeps the packets with one of these opcodes, and CM the
	// connection manager MADs carrying one of these messages; a packet
	// passes if either list keeps it, and every packet if both are empty.
	Opcodes []packet.Opcode
	CM      []mad.AttrID
}

// Match reports whether p passes f.
func (f *Filter) Match(p *Packet) bool {
	if (len(f.Opcodes) > 0 || len(f.CM) > 0) && !slices.Contains(f.Opcodes, p.BTH.Opcode) && !f.matchCM(p) {
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

// matchCM reports whether p carries one of f's connection manager messages.
func (f *Filter) matchCM(p *Packet) bool {
	if len(f.CM) == 0 {
		return false
	}
	msg, ok := p.cmMessage()
	return ok && slices.Contains(f.CM, msg)
}

// AddOps adds to f the opcodes and connection manager messages of a
// comma-separated list. An opcode is named by its number (20, 0x14), its
// full name (RC_FETCH_ADD), its operation on every transport (SEND_ONLY:
// RC_SEND_ONLY, UC_SEND_ONLY and UD_SEND_ONLY), or its kind (SEND: every
// SEND opcode; ACKNOWLEDGE, RDMA_READ_RESPONSE, ...); a connection manager
// message by the name `gorxe dump` shows after "cm=" (REQ, REP, RTU, REJ,
// MRA, DREQ, DREP, SIDR_REQ, SIDR_REP, LAP, APR). Names are
// case-insensitive. An element that names neither leaves f unchanged and
// returns ErrBadFilter.
func (f *Filter) AddOps(list string) error {
	var (
		ops []packet.Opcode
		cm  []mad.AttrID
	)
	for item := range strings.SplitSeq(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return fmt.Errorf("%w: empty opcode in %q", ErrBadFilter, list)
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
		if len(ops) > n {
			continue
		}
		if a, ok := cmMessageNamed(item); ok {
			cm = append(cm, a)
			continue
		}
		return fmt.Errorf("%w: %q names no opcode or connection manager message", ErrBadFilter, item)
	}
	f.Opcodes = append(f.Opcodes, ops...)
	slices.Sort(f.Opcodes)
	f.Opcodes = slices.Compact(f.Opcodes)
	f.CM = append(f.CM, cm...)
	slices.Sort(f.CM)
	f.CM = slices.Compact(f.CM)
	return nil
}

// cmMessageNamed returns the connection manager message name names, in
// any case.
func cmMessageNamed(name string) (mad.AttrID, bool) {
	for a := mad.AttrREQ; a.Known(); a++ {
		if strings.EqualFold(name, a.String()) {
			return a, true
		}
	}
	return 0, false
}
