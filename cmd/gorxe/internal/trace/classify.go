package trace

import (
	"slices"
	"time"

	"github.com/gorxe/gorxe/packet"
)

// Mark tells what a packet's PSN says about its sender's sequence.
type Mark uint8

// Marks.
const (
	MarkNone       Mark = iota
	MarkRetransmit      // the sender sent this PSN before
	MarkDuplicate       // a copy of the sender's previous packet, right after it and unprompted; or an ACK repeated
	MarkFill            // first sight of a PSN below the sender's highest: it fills a gap
)

// String returns the tag the diagram shows for m ("" for MarkNone).
func (m Mark) String() string {
	switch m {
	case MarkRetransmit:
		return "retransmission"
	case MarkDuplicate:
		return "duplicate"
	case MarkFill:
		return "fills gap"
	}
	return ""
}

// Loss is a run of PSNs missing from a sender's sequence (its requests, or the packets of one
// READ response) that a later packet filled, so the capture point saw the sender skip them:
// they were lost before it. A packet the capture keeps, marked as dropped by fault injection
// (Packet.Lost), is in its sender's sequence and leaves no gap: it is drawn itself.
type Loss struct {
	Src, Dst    Endpoint
	First, Last packet.PSN
	Before      int // index of the packet whose PSN jumped over them
}

// farJump is how far a PSN may move from a sender's highest before it is taken as a new
// connection reusing the QPs (a fresh random initial PSN) rather than loss or retransmission.
// It is far beyond any send window (rxe's is 128 PSNs) or READ reservation.
const farJump = 1 << 15

// copyWindow is how soon after a packet an identical one must follow to be a copy the
// network made rather than a resend: a requester resends on a NAK, which the capture shows
// between the two, or when its ACK timer expires, which takes milliseconds at the least.
const copyWindow = 500 * time.Microsecond

// streamKey separates a sender's requests from its responses (ACKs, READ responses), which
// number the peer's requests, not its own.
type streamKey struct {
	src, dst Endpoint
	response bool
}

// stream is what classify remembers of one sender's sequence.
type stream struct {
	high   packet.PSN // highest PSN sent
	highOp packet.Opcode
	seen   map[uint64]bool // see seenKey
	last   Packet          // the previous packet of the stream
	lastAt int             // and its index
	gaps   []gap           // request PSN gaps of the current connection
	losses []gap           // gaps filled later, of this and earlier connections
}

type gap struct {
	first, last packet.PSN
	before      int
	filled      bool
}

// seenKey identifies a packet of a stream for "sent before": the PSN of a request or of a
// READ response (resent from a re-request, it may change from MIDDLE to FIRST); the opcode,
// PSN and syndrome of an acknowledgement, since an ACK and a NAK may name the same PSN.
func seenKey(p *Packet, response bool) uint64 {
	k := uint64(p.PSN)
	switch {
	case !response:
	case p.Opcode.Kind() == packet.KindRDMAReadResponse:
		k |= 1 << 24
	default:
		k |= uint64(p.Opcode)<<24 | uint64(p.Syndrome)<<32
	}
	return k
}

// classify sets the Mark of every packet and returns the losses, in packet order of the packet
// that revealed each.
func classify(pkts []Packet) []Loss {
	streams := map[streamKey]*stream{}
	var order []streamKey
	// lastFrom holds the index of the latest packet of each direction: a packet repeated
	// after its peer said something (a NAK, an ACK) was sent again on purpose.
	lastFrom := map[[2]Endpoint]int{}
	// readHigh holds the highest READ response PSN of each direction: a READ request for a
	// PSN the responder has already answered re-requests the rest of an earlier READ.
	readHigh := map[[2]Endpoint]packet.PSN{}
	for i := range pkts {
		p := &pkts[i]
		key := streamKey{p.Src, p.Dst, p.Opcode.IsResponse()}
		back := [2]Endpoint{p.Dst, p.Src}
		peerAt, heard := lastFrom[back]
		if !p.Lost { // a packet fault injection dropped told its peer nothing
			lastFrom[[2]Endpoint{p.Src, p.Dst}] = i
		}
		answered, reads := readHigh[back]
		reread := reads && p.Opcode.Kind() == packet.KindRDMAReadRequest &&
			p.PSN.LessThanEq(answered) && abs(answered.Diff(p.PSN)) <= farJump
		if p.Opcode.Kind() == packet.KindRDMAReadResponse {
			if h, ok := readHigh[[2]Endpoint{p.Src, p.Dst}]; !ok || h.LessThan(p.PSN) || abs(p.PSN.Diff(h)) > farJump {
				readHigh[[2]Endpoint{p.Src, p.Dst}] = p.PSN
			}
		}
		s := streams[key]
		if s == nil || abs(p.PSN.Diff(s.high)) > farJump {
			if s == nil {
				order = append(order, key)
			}
			s = restart(s, p)
			streams[key] = s
			s.note(p, i, key.response)
			continue
		}
		s.step(p, i, key.response, heard && peerAt > s.lastAt, reread)
	}
	var out []Loss
	for _, k := range order {
		for _, g := range streams[k].losses {
			out = append(out, Loss{Src: k.src, Dst: k.dst, First: g.first, Last: g.last, Before: g.before})
		}
	}
	slices.SortStableFunc(out, func(a, b Loss) int { return a.Before - b.Before })
	return out
}

// restart begins (or begins again, for a new connection) the stream at p, keeping the losses
// already found.
func restart(old *stream, p *Packet) *stream {
	s := &stream{high: p.PSN, highOp: p.Opcode, seen: map[uint64]bool{}}
	if old != nil {
		s.losses = old.losses
	}
	return s
}

func (s *stream) note(p *Packet, i int, response bool) {
	s.seen[seenKey(p, response)] = true
	s.last, s.lastAt = *p, i
}

// step classifies p, the next packet of the stream, at index i. prompted tells whether the
// peer sent anything since the stream's previous packet; reread, whether p is a READ request
// for PSNs the responder already answered.
func (s *stream) step(p *Packet, i int, response, prompted, reread bool) {
	defer s.note(p, i, response)
	if s.seen[seenKey(p, response)] {
		repeat := !prompted && p.Time.Sub(s.last.Time) < copyWindow &&
			s.last.PSN == p.PSN && s.last.Opcode == p.Opcode && s.last.ICRC == p.ICRC
		if repeat || p.Opcode.Kind() == packet.KindAcknowledge {
			p.Mark = MarkDuplicate
		} else {
			p.Mark = MarkRetransmit
		}
		return
	}
	if reread {
		p.Mark = MarkRetransmit
	}
	if d := p.PSN.Diff(s.high); d > 0 {
		if d > 1 && s.skips(p, response) {
			s.gaps = append(s.gaps, gap{first: s.high.Add(1), last: p.PSN.Sub(1), before: i})
		}
		s.high, s.highOp = p.PSN, p.Opcode
		return
	}
	for j := range s.gaps {
		g := &s.gaps[j]
		if p.PSN.InWindow(g.first, uint32(g.last.Diff(g.first))+1) {
			p.Mark = MarkFill
			if !g.filled {
				g.filled = true
				s.losses = append(s.losses, *g)
			}
			return
		}
	}
	if !response {
		// Below the highest, never seen, in no gap: a request the capture saw out of order,
		// so sent again.
		p.Mark = MarkRetransmit
	}
}

// skips reports whether p, beyond the stream's highest PSN by more than one, leaves PSNs
// out that the sender must have sent. A requester's PSNs run on by one per packet, except
// after an RDMA READ request, which reserves one per response packet. A responder's run on
// only within one READ response; its ACKs name whichever request they acknowledge.
func (s *stream) skips(p *Packet, response bool) bool {
	if !response {
		return s.highOp.Kind() != packet.KindRDMAReadRequest
	}
	continues := func(op packet.Opcode, positions ...packet.Position) bool {
		return op.Kind() == packet.KindRDMAReadResponse && slices.Contains(positions, op.Position())
	}
	return continues(p.Opcode, packet.PositionMiddle, packet.PositionLast) &&
		continues(s.last.Opcode, packet.PositionFirst, packet.PositionMiddle)
}

func abs(d int32) int32 {
	if d < 0 {
		return -d
	}
	return d
}
