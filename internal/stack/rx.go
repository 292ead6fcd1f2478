package stack

import (
	"errors"
	"net"
	"net/netip"
	"time"
	"unsafe"

	"github.com/gorxe/gorxe/cm"
	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/netio"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/transport"
)

// receiveErrorPause is how long the receive goroutine waits after an error from the network.
const receiveErrorPause = time.Millisecond

// rxScratch is what one reader of the network works with: the messages it reads into and one
// batch slot per worker. On a connection that delivers coalesced runs whole, message i reads
// into chunks[i], whose packets then go to the workers without a copy; otherwise each message
// reads one datagram into a pooled packet buffer, which the packet takes.
type rxScratch struct {
	msgs    []netio.Message
	chunks  []*rxChunk // nil without coalesced runs
	batches []*rxBatch
}

// runsPerRead is the number of coalesced runs a reader offers room for per read: each may hold
// up to 64 datagrams, and the chunks cost 64 KiB each.
const runsPerRead = 16

func (r *Stack) newScratch() *rxScratch {
	n := max(r.conn.BatchSize(), 1)
	coalesce := r.conn.ReceiveBufSize() >= netio.CoalesceBufSize
	if coalesce {
		n = min(n, runsPerRead)
	}
	x := &rxScratch{msgs: make([]netio.Message, n), batches: make([]*rxBatch, len(r.workers))}
	if coalesce {
		x.chunks = make([]*rxChunk, n)
		for i := range x.chunks {
			x.chunks[i] = getChunk()
		}
		return x
	}
	for i := range x.msgs {
		x.msgs[i].Buf = getBuf()
	}
	return x
}

// ready gives every message its whole buffer before a read.
func (x *rxScratch) ready() {
	for i := range x.msgs {
		if x.chunks != nil {
			x.msgs[i].Buf = x.chunks[i].mem[:]
		} else {
			x.msgs[i].Buf = x.msgs[i].Buf[:cap(x.msgs[i].Buf)]
		}
	}
}

func (x *rxScratch) release() {
	for i := range x.msgs {
		if x.chunks != nil {
			chunkPool.Put(x.chunks[i])
		} else {
			putBuf(x.msgs[i].Buf)
		}
	}
}

// chunkOf returns the index of the chunk message i was read into: i, unless the connection
// exchanged buffers among the messages (netio.UDPConn.Receive may, when it drops one).
func (x *rxScratch) chunkOf(i int) int {
	p := unsafe.SliceData(x.msgs[i].Buf)
	if p == &x.chunks[i].mem[0] {
		return i
	}
	for j, c := range x.chunks {
		if p == &c.mem[0] {
			return j
		}
	}
	panic("gorxe: the network connection returned a buffer it was not offered")
}

// receiveLoop reads batches of datagrams, drops what fails the checks that need no QP state, and
// hands the rest, batched per worker, to the workers. With BusyPoll or ReceivePoll set it polls
// for that long after the last datagram before it waits again.
func (r *Stack) receiveLoop() {
	defer r.rxWG.Done()
	x := r.newScratch()
	defer x.release()
	for {
		x.ready()
		var n int
		var err error
		if r.waiter != nil {
			n, err = r.receiveOrdered(x, r.waiter)
		} else {
			n, err = r.spin(x.msgs)
			if n == 0 && err == nil {
				n, err = r.conn.Receive(x.msgs)
			}
		}
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			r.dev.Inc(counter.RcvdNetErr)
			// A persistent error must not turn this loop into a spin; a transient one costs little.
			select {
			case <-r.done:
			case <-time.After(receiveErrorPause):
			}
			continue
		}
		if r.waiter == nil {
			r.dispatch(x, n, false)
		}
	}
}

// receiveOrdered reads one batch and dispatches it under pollMu, the lock Poll reads and
// dispatches under, so that batches reach the workers in the order they left the socket whoever
// read them: a UC QP loses a message that arrives out of order for good, and an RC QP resends
// it. It polls as spin does before it waits for the network outside the lock. Every worker but
// one is woken to handle its batch in parallel; this goroutine runs the last one itself, saving
// a hand-off, and reads again once that is done, so that under load each read takes a larger
// batch.
//
// While an application busy-polls (Poll), it takes the datagrams first: this goroutine, woken for
// each of them, finds the socket empty. Once that happens it stops polling the socket itself
// (rxPoll), and after a few such wake-ups in a row it stops waiting for the network for a while
// (pollerBackoff), leaving the datagrams to the poller and the cores to the application and its
// peer; the first datagram it reads again ends that.
func (r *Stack) receiveOrdered(x *rxScratch, w netio.ReadableWaiter) (int, error) {
	start := time.Now()
	woken, lost, empty := false, 0, 0
	if r.rxPoll == 0 {
		// Not polling, it waits before it reads: the wait's own look at the socket takes the
		// place of a read that would find it empty, one system call fewer per wake-up.
		if err := w.WaitReadable(); err != nil {
			return 0, err
		}
		woken = true
	}
	for {
		if r.pollMu.TryLock() {
			n, err := r.conn.TryReceive(x.msgs)
			if n > 0 && err == nil {
				r.dispatch(x, n, false)
			}
			r.pollMu.Unlock()
			if n > 0 || err != nil {
				return n, err
			}
			if woken {
				lost++
			}
		} else {
			// A poller reads: it takes what woke this goroutine. Blocking on the lock would
			// only cost the poller a wake-up of this goroutine when it unlocks.
			lost++
		}
		woken = false
		if r.rxPoll > 0 && lost == 0 && time.Since(start) < r.rxPoll {
			r.pollPause(empty)
			empty++
			continue
		}
		if lost >= pollerLosses {
			lost = 0
			select {
			case <-r.done:
				return 0, net.ErrClosed
			case <-time.After(pollerBackoff):
			}
		}
		if err := w.WaitReadable(); err != nil {
			return 0, err
		}
		woken = true
	}
}

// pollerLosses wake-ups in a row that find the socket emptied by a busy poller make the receive
// goroutine leave the network to the poller for pollerBackoff. An application that stops polling
// (to sleep on a completion channel) waits at most that long for its next datagram to be read.
const (
	pollerLosses  = 4
	pollerBackoff = 200 * time.Microsecond
)

// spin polls the network for up to rxPoll (BusyPoll or ReceivePoll) and returns what it read,
// pausing between polls (pollPause) so that the goroutines the last read readied (an
// application waiting for its completions) run meanwhile. A goroutine that waits in the
// netpoller costs its thread a sleep and a wake-up in the kernel whenever the socket goes from
// empty to not empty, several µs each on a virtual machine, more than the protocol work of a
// small message; a stream whose next datagrams arrive within the bound never pays it. The bound
// is CPU time given up for that, not protocol time, so it is measured on the real clock even
// when the engines run on a fake one.
func (r *Stack) spin(msgs []netio.Message) (int, error) {
	if r.rxPoll == 0 {
		return 0, nil
	}
	start := time.Now()
	for empty := 0; ; empty++ {
		n, err := r.conn.TryReceive(msgs)
		if n > 0 || err != nil || time.Since(start) >= r.rxPoll {
			return n, err
		}
		r.pollPause(empty)
	}
}

// Poll reads the datagrams that have already arrived, without waiting, and runs their engines on
// the calling goroutine; it reports whether it read any. Latency mode calls it from a CQ poll
// that found nothing, so that a busy-polling application takes its packets off the network and
// sees their completions with no goroutine wake-up in between. It returns false at once while
// another goroutine polls.
func (r *Stack) Poll() bool {
	if !r.pollMu.TryLock() {
		return false
	}
	defer r.pollMu.Unlock()
	if r.poll == nil {
		r.poll = r.newScratch()
	}
	x := r.poll
	x.ready()
	var n int
	var err error
	if r.waiter != nil {
		// A Conn that cannot wait for datagrams is read by the receive goroutine alone, outside
		// this lock: reading it here too could hand the workers batches out of order.
		n, err = r.conn.TryReceive(x.msgs)
	}
	if n == 0 || err != nil {
		// Nothing arrived (the receive goroutine meets and counts the same errors): run what
		// the workers have due instead, so that a busy-polling application drives its engines'
		// timers and queued runs without waiting for their goroutines to be scheduled beside it.
		ran := false
		now := r.clk.Now()
		for _, w := range r.workers {
			ran = w.runDue(now) || ran
		}
		return ran
	}
	r.dispatch(x, n, true)
	return true
}

// ReadableFDs appends to dst the file descriptors the stack's datagrams arrive on, for a caller
// that waits on them with poll(2) and then calls Poll; none when Poll leaves the network alone.
func (r *Stack) ReadableFDs(dst []int) []int {
	if r.waiter == nil {
		return dst
	}
	return netio.ReadableFDs(r.conn, dst)
}

// dispatch checks the first n datagrams of x and hands each worker its share: the worker of the
// last packet (every worker, for a poll on the application's goroutine) runs on the calling
// goroutine if nobody runs it.
func (r *Stack) dispatch(x *rxScratch, n int, polled bool) {
	last := -1
	for i := range x.msgs[:n] {
		if w := r.take(x, i); w >= 0 {
			last = w
		}
	}
	// Every worker has its share queued before any of them runs one: what a packet sets off (a
	// MAD's connection event, and a verb the program calls on it) must not reach a QP before the
	// packets for that QP read with it, which worker.do handles first.
	for i, b := range x.batches {
		if b != nil {
			r.workers[i].enqueue(b)
		}
	}
	for i, b := range x.batches {
		if b == nil {
			continue
		}
		x.batches[i] = nil
		r.workers[i].start(polled || i == last, polled)
	}
}

// take moves the packets of message i of x that are for QPs of this device into their workers'
// batches, and returns the index of the worker that got the last one, or -1 if there was none.
//
// The datagrams of a coalesced run go as views of the run's chunk, which the reader replaces.
// A lone datagram in a chunk is copied into a packet buffer instead and the chunk read into
// again: a packet waiting in a worker's queue would otherwise hold 64 KiB.
func (r *Stack) take(x *rxScratch, i int) int {
	m := &x.msgs[i]
	if x.chunks == nil {
		w, taken := r.classify(m.Buf, m, nil, x.batches, nil)
		if taken {
			m.Buf = getBuf()
		}
		return w
	}
	j := x.chunkOf(i)
	c := x.chunks[j]
	if m.Datagrams() == 1 {
		if len(m.Buf) > transport.MaxPacketSize {
			r.dev.Inc(counter.RcvdMalformed)
			return -1
		}
		buf := getBuf()
		w, taken := r.classify(buf[:copy(buf, m.Buf)], m, nil, x.batches, nil)
		if !taken {
			putBuf(buf)
		}
		return w
	}
	last := -1
	// A run holds the segments of segmented sends, whose IPv4 IDs count up from 0: each
	// datagram is expected to carry one more than the one before, whose ICRC then needs no
	// solving for the ID (packet.VerifyICRCIPv4AnyIDNear).
	var id uint16
	for d := range m.Datagrams() {
		dg := m.Datagram(d)
		if len(dg) > transport.MaxPacketSize {
			r.dev.Inc(counter.RcvdMalformed)
		} else if w, _ := r.classify(dg, m, c, x.batches, &id); w >= 0 {
			last = w
		}
		id++
	}
	// The packets have not reached their workers yet, so the count is exact.
	if c.refs.Load() > 0 {
		x.chunks[j] = getChunk()
	}
	return last
}

// classify checks datagram dg, which arrived in message m, and, if it is for a QP of this device,
// adds it to the batch of that QP's worker. The packet views dg in chunk when that is set (taking
// a reference to the chunk) and otherwise takes dg, a packet buffer, reported as taken. It
// returns the index of the worker that got the packet (the last one for multicast, whose members
// each get a copy), or -1 if it was dropped. id, when not nil, is the IPv4 ID dg is expected to
// carry, and becomes the one it carried once its ICRC is checked; nil expects 0.
//
// The destination is looked up before the ICRC is computed, as rxe does (hdr_check before its
// ICRC check): a packet for a QP or group this device does not have is dropped and counted
// without a pass over its bytes. A packet whose corruption hit the QPN is therefore counted as
// for an unknown QPN rather than as an ICRC error.
func (r *Stack) classify(dg []byte, m *netio.Message, chunk *rxChunk, batches []*rxBatch, id *uint16) (w int, taken bool) {
	var p packet.Parsed
	if err := packet.Parse(dg, &p); err != nil {
		r.dev.Inc(counter.RcvdMalformed)
		return -1, false
	}
	bth := p.BTH()
	qpn := bth.DestQP()
	var c *QP       // the destination QP; nil for multicast, and for QP 1 while the device has none
	var cores []*QP // the members of a multicast packet's group
	if qpn == packet.MulticastQPN {
		if cores = r.mcast.members(m.Dst.Addr().Unmap().WithZone("")); len(cores) == 0 {
			r.dev.Inc(counter.RcvdNoMcastGroup)
			return -1, false
		}
	} else if c = r.qps.lookup(qpn); c == nil && qpn != cm.QP1 {
		r.dev.Inc(counter.RcvdUnknownQPN)
		return -1, false
	}
	if !r.verifyICRC(dg, m, id) {
		r.dev.Inc(counter.RcvdICRCErr)
		return -1, false
	}
	// The P_Key table holds only the default key: accept it and its limited-member form.
	if bth.PKey()&packet.PKeyMembershipMask != packet.DefaultPKey&packet.PKeyMembershipMask {
		r.dev.Inc(counter.RcvdBadPKey)
		return -1, false
	}
	from := received(m)
	switch {
	case cores != nil:
		return fanOut(dg, cores, from, batches), false
	case c == nil:
		r.answerCM(&p, from)
		return -1, false
	}
	if chunk != nil {
		chunk.refs.Add(1)
	}
	add(batches, c, rxPacket{buf: dg, chunk: chunk, parsed: p, from: from, qp: c})
	return c.w.idx, chunk == nil
}

// add appends a packet for QP c to its worker's batch.
func add(batches []*rxBatch, c *QP, pkt rxPacket) {
	b := batches[c.w.idx]
	if b == nil {
		b = getBatch()
		batches[c.w.idx] = b
	}
	b.pkts = append(b.pkts, pkt)
}

// fanOut delivers multicast packet dg to cores, the QPs attached to its destination group, each
// with its own copy, as rxe does.
func fanOut(dg []byte, cores []*QP, from packet.Envelope, batches []*rxBatch) int {
	last := -1
	for _, c := range cores {
		buf := getBuf()
		n := copy(buf, dg)
		var p packet.Parsed
		if packet.Parse(buf[:n], &p) != nil {
			putBuf(buf)
			return last
		}
		add(batches, c, rxPacket{buf: buf, parsed: p, from: from, qp: c})
		last = c.w.idx
	}
	return last
}

// verifyICRC checks the ICRC of a received datagram. IPv6 packets are checked exactly (the ICRC
// masks what a socket cannot see). IPv4 packets from a supplied network are checked exactly with
// the IP ID 0 and DF that gorxe senders use; from a UDP socket the IP ID is unknown, so the
// packet is accepted when some ID and flags make the ICRC match. The solver starts from the ID
// expected (id, as classify takes it) with DF, so packets from gorxe peers, a lone datagram with
// ID 0 or the segments of a run, cost one CRC pass and nothing more; kernel rxe's varying IDs
// take a field multiplication more. Either way a corrupted packet passes with probability about
// 2^-14 (see packet.VerifyICRCIPv4AnyID).
func (r *Stack) verifyICRC(dg []byte, m *netio.Message, id *uint16) bool {
	src, dst := unmapPort(m.Src), unmapPort(m.Dst)
	if src.Addr().Is6() {
		env := packet.Envelope{Src: src, Dst: dst}
		return env.VerifyICRC(dg) == nil
	}
	if r.cfg.Strict {
		env := packet.Envelope{Src: src, Dst: dst, IPFlags: packet.IPv4DontFragment}
		return env.VerifyICRC(dg) == nil
	}
	var near uint16
	if id != nil {
		near = *id
	}
	got, _, err := packet.VerifyICRCIPv4AnyIDNear(src, dst, dg, near)
	if err != nil {
		return false
	}
	if id != nil {
		*id = got
	}
	return true
}

func unmapPort(a netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(a.Addr().Unmap().WithZone(""), a.Port())
}
