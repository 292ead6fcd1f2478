package gorxe

import (
	"encoding/binary"
	"math/bits"
	"sync/atomic"

	"github.com/gorxe/gorxe/netio"
	"github.com/gorxe/gorxe/packet"
)

// idDeltas remembers what packet.AdjustICRCIPv4ID does to a packet's ICRC, so that netio's
// SetIPv4ID hook costs a few loads per datagram instead of two CRC passes over the packet's
// length: the change is linear in from^to and depends otherwise only on the packet's length, and a
// segmented send gives every datagram of a run the same length and IDs 1, 2, 3, ...
//
// A slot holds, for one packet length and one bit of from^to, the length in its upper half and
// the ICRC change that bit makes in its lower half: a slot is either wholly right or names
// another length, so concurrent senders share the table without a lock, and one that finds a
// slot for another length computes the change and takes the slot over. Lengths share slots by
// their low bits; the few a connection sends (full packets of its MTU, their variants with an
// AETH or RETH) rarely collide.
type idDeltas struct {
	slot [idDeltaLengths][16]atomic.Uint64
}

// idDeltaLengths is how many packet lengths the table holds at once.
const idDeltaLengths = 64

// ipv4IDDeltas is shared by every device: the changes are a property of CRC-32, not of a device.
var ipv4IDDeltas idDeltas

// adjust rewrites the ICRC of pkt, computed for IPv4 Identification from, into the ICRC for to,
// as packet.AdjustICRCIPv4ID does.
func (t *idDeltas) adjust(pkt []byte, from, to uint16) {
	x := from ^ to
	n := len(pkt)
	if x == 0 || n < packet.ICRCSize {
		return
	}
	row := &t.slot[n%idDeltaLengths]
	icrc := pkt[n-packet.ICRCSize:]
	for x != 0 {
		b := bits.TrailingZeros16(x)
		x &= x - 1
		if v := row[b].Load(); v>>32 == uint64(n) {
			binary.LittleEndian.PutUint32(icrc, binary.LittleEndian.Uint32(icrc)^uint32(v))
			continue
		}
		// Not remembered: let packet do it for this bit and remember what it changed.
		before := binary.LittleEndian.Uint32(icrc)
		packet.AdjustICRCIPv4ID(pkt, 0, 1<<b)
		row[b].Store(uint64(n)<<32 | uint64(before^binary.LittleEndian.Uint32(icrc)))
	}
}

// adjustIPv4ID is netio's SetIPv4ID hook: the ICRC follows the IPv4 ID the kernel gives a
// segment.
func adjustIPv4ID(m *netio.Message, from, to uint16) { ipv4IDDeltas.adjust(m.Buf, from, to) }
