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

// Notes on the narration, after the packet.
const (
	noteRetransmission = "(retransmission)"
	noteAckAgain       = "(acknowledges again)"
	noteLost           = "✗ LOST (fault injection: dropped before the network)"
	noteDuplicate      = "DUPLICATE (fault injection: a second copy)"
	noteCorrupted      = "✗ CORRUPTED (fault injection: one bit flipped; the receiver drops it on its ICRC)"
	noteDelayed        = "DELAYED (fault injection: held back and sent late)"
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
