package demo

import (
	"net/netip"

	"github.com/gorxe/gorxe/netio"
	"github.com/gorxe/gorxe/packet"
)

// resends tells a transport's resend from new traffic the way a TCP analyser tells a
// retransmission: per sender and direction (requests, or responses to them) it keeps the highest
// PSN sent so far, and a packet at or behind it was sent before. A READ request counts for every
// PSN it reserves, so a retried READ asking for the tail of the answer is a resend too.
type resends struct {
	mtu  int
	high map[streamKey]packet.PSN
}

// streamKey is one sender's packets on one connection in one direction.
type streamKey struct {
	src       netip.AddrPort
	dqpn      uint32
	responses bool
}

func newResends(mtu int) *resends { return &resends{mtu: mtu, high: map[streamKey]packet.PSN{}} }

// Notes on the narration, after the packet; the run's introduction explains the fault marks.
const (
	noteRetransmission = "(retransmission)"
	noteAckAgain       = "(acknowledges again)"
	noteLost           = "✗ LOST (fault injection)"
	noteDuplicate      = "DUPLICATE (fault injection)"
	noteCorrupted      = "✗ CORRUPTED (fault injection)"
	noteDelayed        = "DELAYED (fault injection)"
)

// note returns what the narration says about s, sent from src with fate dir, and records it. The
// fault injector's marks come first: a copy it added or held back is not the transport's doing,
// and a corrupted copy's PSN may be the flipped bit, so it does not move the sender's high mark.
func (r *resends) note(src netip.AddrPort, s *summary, dir netio.Direction) []string {
	var notes []string
	if dir.Base() == netio.Lost {
		notes = append(notes, noteLost)
	}
	if dir.Has(netio.Duplicate) {
		notes = append(notes, noteDuplicate)
	}
	if dir.Has(netio.Corrupt) {
		return append(notes, noteCorrupted)
	}
	if dir.Has(netio.Delayed) {
		notes = append(notes, noteDelayed)
	}
	k := streamKey{src: src, dqpn: s.dqpn, responses: s.opcode.IsResponse()}
	last := s.psn
	if n := r.readPackets(s); n > 1 {
		last = s.psn.Add(uint32(n - 1))
	}
	high, seen := r.high[k]
	if !seen || high.LessThan(last) {
		r.high[k] = last
	}
	if !seen || dir.Has(netio.Duplicate) || dir.Has(netio.Delayed) {
		return notes
	}
	// A plain ACK may repeat its PSN (an RNR NAK, then the ACK of the same request); only one
	// behind an earlier acknowledgement acknowledges again. Any other packet at or behind the
	// high mark was sent before.
	plainAck := s.opcode.Kind() == packet.KindAcknowledge
	switch {
	case plainAck && s.psn.LessThan(high):
		notes = append(notes, noteAckAgain)
	case !plainAck && s.psn.LessThanEq(high):
		notes = append(notes, noteRetransmission)
	}
	return notes
}

// readPackets returns how many PSNs a READ request reserves: one per response packet.
func (r *resends) readPackets(s *summary) int {
	if s.opcode.Kind() != packet.KindRDMAReadRequest || s.dmaLen == 0 {
		return 1
	}
	return (int(s.dmaLen) + r.mtu - 1) / r.mtu
}

// faultKey explains the fault marks, once, before a run under fault injection.
const faultKey = `  Packets are shown in the order each device put them on the wire, marked with what the
  faults did: LOST never reached the network; DUPLICATE is a second copy; CORRUPTED had
  one bit flipped, so its ICRC fails and the receiver drops it; DELAYED was held back and
  sent after packets that came later. RC recovers on its own: the responder NAKs a gap in
  PSNs, the requester resends from the missing PSN (go-back-N) or when its ACK timer
  expires; "(retransmission)" marks a packet sent before. UC and UD leave recovery to the
  application.
`
