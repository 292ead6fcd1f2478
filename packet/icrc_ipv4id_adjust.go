package packet

import (
	"encoding/binary"
	"hash/crc32"
	"math/bits"
	"sync"
	"sync/atomic"
)

// zeros feeds runs of zero bytes to the CRC.
var zeros [1024]byte

// ipv4IDTrailer is how many bytes of the ICRC's input follow the IPv4 Identification field,
// beyond the packet's own length: the rest of the IPv4 header (14) and the UDP header (8), less
// the ICRC itself (4), which the input does not include.
const ipv4IDTrailer = IPv4HeaderSize - 6 + UDPHeaderSize - ICRCSize

// AdjustICRCIPv4ID rewrites the ICRC carried in pkt (BTH to ICRC), computed for the IPv4
// Identification from, into the ICRC of the same packet sent with Identification to. A sender
// needs it when the kernel numbers the datagrams of one UDP_SEGMENT send 0, 1, 2, ...: the ICRC
// covers the ID. CRC-32 is affine, so the change depends only on from^to and the packet's length
// (the register run from zero over the changed bits and the zero bytes after them); the rest of
// the packet is not read, so a packet corrupted on purpose stays corrupt. The change each bit of
// the ID makes at a length is remembered (idChanges), so a segmented send's datagrams, all of one
// length, cost a few loads each.
func AdjustICRCIPv4ID(pkt []byte, from, to uint16) {
	if len(pkt) < ICRCSize {
		return
	}
	AdjustICRCIPv4IDAt(pkt[len(pkt)-ICRCSize:], len(pkt), from, to)
}

// AdjustICRCIPv4IDAt is AdjustICRCIPv4ID for a packet of length size whose ICRC field is icrc
// (its last four bytes), for a packet held in pieces (see [Envelope.PutICRCParts]).
func AdjustICRCIPv4IDAt(icrc []byte, size int, from, to uint16) {
	x := from ^ to
	if x == 0 || len(icrc) < ICRCSize {
		return
	}
	binary.LittleEndian.PutUint32(icrc, binary.LittleEndian.Uint32(icrc)^idChanges.change(size, x))
}

// idChange computes the change to the ICRC of a packet of length n (BTH to ICRC) whose IPv4
// Identification changes by x.
func idChange(n int, x uint16) uint32 {
	n += 2 + ipv4IDTrailer // the ID field and everything after it
	// The linear part L(d) of the CRC of a difference d equals crc(d) ^ crc(0...0) over the same
	// length; leading zero bytes of d do not change it, so d starts at the ID field.
	diff := [2]byte{byte(x >> 8), byte(x)}
	d := updateSmall(0, diff[:]) // not crc32.Update, through which a stack slice escapes
	z := updateSmall(0, zeros[:2])
	if rest := n - 2; rest < anyIDDirect {
		// Running the register over the zero bytes after the ID field is a multiplication by
		// x^(8 rest): one instead of two CRC passes over the packet's length.
		return gfMul(d^z, adjustShift()[rest])
	}
	for rest := n - 2; rest > 0; {
		k := min(rest, len(zeros))
		d = crc32.Update(d, crc32.IEEETable, zeros[:k])
		z = crc32.Update(z, crc32.IEEETable, zeros[:k])
		rest -= k
	}
	return d ^ z
}

// idChangeTable remembers idChange for one bit of the ID at a time: the change is linear in x,
// so the change of any x is the XOR of its bits'. A slot holds, for one packet length and one
// bit, the length in its upper half and the change in its lower half: a slot is either wholly
// right or names another length, so concurrent senders share the table without a lock, and one
// that finds a slot for another length computes the change and takes the slot over. Lengths
// share slots by their low bits; the few a connection sends (full packets of its MTU, their
// variants with an AETH or RETH) rarely collide.
type idChangeTable struct {
	slot [idChangeLengths][16]atomic.Uint64
}

// idChangeLengths is how many packet lengths the table holds at once.
const idChangeLengths = 64

// idChanges is shared by every sender: the changes are a property of CRC-32.
var idChanges idChangeTable

// change returns idChange(n, x), from the table where it can.
func (t *idChangeTable) change(n int, x uint16) uint32 {
	row := &t.slot[n%idChangeLengths]
	var c uint32
	for x != 0 {
		b := bits.TrailingZeros16(x)
		x &= x - 1
		v := row[b].Load()
		if v>>32 != uint64(n) {
			v = uint64(n)<<32 | uint64(idChange(n, 1<<b))
			row[b].Store(v)
		}
		c ^= uint32(v)
	}
	return c
}

// adjustShift returns x^(8t) for t < anyIDDirect: the CRC register moved through t zero bytes.
var adjustShift = sync.OnceValue(func() *[anyIDDirect]uint32 {
	t := new([anyIDDirect]uint32)
	const x8 = gfOne >> 8 // x^8: bit 31 is x^0
	t[0] = gfOne
	for i := 1; i < anyIDDirect; i++ {
		t[i] = gfMul(t[i-1], x8)
	}
	return t
})
