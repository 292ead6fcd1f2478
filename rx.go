package gorxe

import (
	"errors"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorxe/gorxe/netio"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/transport"
)

// pktBuf is one pooled packet buffer, large enough for any packet the transport builds or a peer
// may send at MTU 4096.
type pktBuf = [transport.MaxPacketSize]byte

var bufPool = sync.Pool{New: func() any { return new(pktBuf) }}

// getBuf returns a pooled buffer as a full-length slice.
func getBuf() []byte { return bufPool.Get().(*pktBuf)[:] }

// putBuf returns a buffer obtained from getBuf (possibly re-sliced from its start). Slices of any
// other memory are left to the garbage collector.
func putBuf(b []byte) {
	if cap(b) != transport.MaxPacketSize {
		return
	}
	bufPool.Put((*pktBuf)(b[:transport.MaxPacketSize]))
}

// rxPacket is one received packet on its way from the receive goroutine to a worker. It owns buf;
// parsed views alias it.
type rxPacket struct {
	buf    []byte
	parsed packet.Parsed
	from   packet.Envelope
	core   *qpCore
	more   bool // another packet for core follows in the batch
}

// rxBatch carries the packets of one receive call that belong to one worker.
type rxBatch struct{ pkts []rxPacket }

var batchPool = sync.Pool{New: func() any { return &rxBatch{pkts: make([]rxPacket, 0, netio.IdealBatchSize)} }}

func getBatch() *rxBatch { return batchPool.Get().(*rxBatch) }

func putBatch(b *rxBatch) {
	b.pkts = b.pkts[:0]
	batchPool.Put(b)
}

// rxCounters count the packets dropped before they reach a QP.
type rxCounters struct {
	malformed   atomic.Uint64 // not a valid RoCEv2 packet
	badICRC     atomic.Uint64
	badPKey     atomic.Uint64
	unknownQPN  atomic.Uint64 // no such QP (including QP0)
	noMcastQP   atomic.Uint64 // multicast packet for a group no QP joined
	receiveErrs atomic.Uint64 // errors from the network other than close
}

// receiveErrorPause is how long the receive goroutine waits after an error from the network.
const receiveErrorPause = time.Millisecond

// receiveLoop reads batches of datagrams, drops what fails the checks that need no QP state, and
// hands the rest, batched per worker, to the workers.
func (d *Device) receiveLoop() {
	defer d.rxWG.Done()
	msgs := make([]netio.Message, max(d.conn.BatchSize(), 1))
	for i := range msgs {
		msgs[i].Buf = getBuf()
	}
	batches := make([]*rxBatch, len(d.workers))
	for {
		for i := range msgs {
			msgs[i].Buf = msgs[i].Buf[:cap(msgs[i].Buf)]
		}
		n, err := d.conn.Receive(msgs)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				break
			}
			d.rx.receiveErrs.Add(1)
			// A persistent error must not turn this loop into a spin; a transient one costs little.
			select {
			case <-d.done:
			case <-time.After(receiveErrorPause):
			}
			continue
		}
		last := -1
		for i := range msgs[:n] {
			if w := d.classify(&msgs[i], batches); w >= 0 {
				last = w
			}
		}
		// Every worker but one is woken to handle its batch in parallel; this goroutine runs the
		// last one itself, saving a hand-off, and reads again once that is done, so that
		// under load each read takes a larger batch.
		for i, b := range batches {
			if b == nil {
				continue
			}
			batches[i] = nil
			d.workers[i].deliver(b, i == last)
		}
	}
	for i := range msgs {
		putBuf(msgs[i].Buf)
	}
}

func (d *Device) dropBatch(b *rxBatch) {
	for i := range b.pkts {
		putBuf(b.pkts[i].buf)
		b.pkts[i] = rxPacket{}
	}
	putBatch(b)
}

// classify checks one datagram and, if it is for a QP of this device, moves it into the batch of
// that QP's worker (taking m's buffer and giving m a fresh one). It returns the index of the
// worker that got the packet (the last one for multicast), or -1 if it was dropped.
func (d *Device) classify(m *netio.Message, batches []*rxBatch) int {
	var p packet.Parsed
	if err := packet.Parse(m.Buf, &p); err != nil {
		d.rx.malformed.Add(1)
		return -1
	}
	if !d.verifyICRC(m) {
		d.rx.badICRC.Add(1)
		return -1
	}
	bth := p.BTH()
	// The P_Key table holds only the default key: accept it and its limited-member form.
	if bth.PKey()&packet.PKeyMembershipMask != packet.DefaultPKey&packet.PKeyMembershipMask {
		d.rx.badPKey.Add(1)
		return -1
	}
	from := packet.Envelope{Src: m.Src, Dst: m.Dst, TrafficClass: m.TOS, HopLimit: m.TTL}
	qpn := bth.DestQP()
	if qpn == packet.MulticastQPN {
		return d.fanOut(m, from, batches)
	}
	c := d.lookupCore(qpn)
	if c == nil {
		d.rx.unknownQPN.Add(1)
		return -1
	}
	add(batches, c, m.Buf, &p, from)
	m.Buf = getBuf()
	return c.w.idx
}

// add appends a packet for core c to its worker's batch.
func add(batches []*rxBatch, c *qpCore, buf []byte, p *packet.Parsed, from packet.Envelope) {
	b := batches[c.w.idx]
	if b == nil {
		b = getBatch()
		batches[c.w.idx] = b
	}
	b.pkts = append(b.pkts, rxPacket{buf: buf, parsed: *p, from: from, core: c})
}

// fanOut delivers a multicast packet to every QP attached to its destination group, each with its
// own copy, as rxe does.
func (d *Device) fanOut(m *netio.Message, from packet.Envelope, batches []*rxBatch) int {
	group := GIDFromAddr(m.Dst.Addr())
	cores := d.mcast.members(group)
	if len(cores) == 0 {
		d.rx.noMcastQP.Add(1)
		return -1
	}
	last := -1
	for _, c := range cores {
		buf := getBuf()
		n := copy(buf, m.Buf)
		var p packet.Parsed
		if packet.Parse(buf[:n], &p) != nil {
			putBuf(buf)
			return last
		}
		add(batches, c, buf, &p, from)
		last = c.w.idx
	}
	return last
}

// verifyICRC checks the ICRC of a received datagram. IPv6 packets are checked exactly (the ICRC
// masks what a socket cannot see). IPv4 packets from a supplied network are checked exactly with
// the IP ID 0 and DF that gorxe senders use; from a UDP socket the IP ID is unknown, so the
// packet is accepted when some ID and flags make the ICRC match. The solver starts from ID 0 with
// DF, so packets from gorxe peers cost one CRC pass and nothing more; kernel rxe's varying IDs
// take two extra field multiplications. Either way a corrupted packet passes with probability
// about 2^-14 (see packet.VerifyICRCIPv4AnyID).
func (d *Device) verifyICRC(m *netio.Message) bool {
	src, dst := unmapPort(m.Src), unmapPort(m.Dst)
	if src.Addr().Is6() {
		env := packet.Envelope{Src: src, Dst: dst}
		return env.VerifyICRC(m.Buf) == nil
	}
	if d.strict {
		env := packet.Envelope{Src: src, Dst: dst, IPFlags: packet.IPv4DontFragment}
		return env.VerifyICRC(m.Buf) == nil
	}
	_, _, err := packet.VerifyICRCIPv4AnyID(src, dst, m.Buf)
	return err == nil
}

func unmapPort(a netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(a.Addr().Unmap().WithZone(""), a.Port())
}

// lookupCore returns the device layer's handle of QP qpn, or nil when there is no such QP (or it
// is still being created).
func (d *Device) lookupCore(qpn uint32) *qpCore {
	q := d.qpt.Lookup(qpn)
	if q == nil {
		return nil
	}
	c, _ := q.DriverData().(*qpCore)
	return c
}
