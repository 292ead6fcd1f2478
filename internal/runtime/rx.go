package runtime

import (
	"errors"
	"net"
	"net/netip"
	"runtime"
	"time"

	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/netio"
	"github.com/gorxe/gorxe/packet"
)

// receiveErrorPause is how long the receive goroutine waits after an error from the network.
const receiveErrorPause = time.Millisecond

// rxScratch is what one reader of the network works with: the messages it reads into, each with
// a pooled buffer, and one batch slot per worker.
type rxScratch struct {
	msgs    []netio.Message
	batches []*rxBatch
}

func (r *Runtime) newScratch() *rxScratch {
	x := &rxScratch{msgs: make([]netio.Message, max(r.conn.BatchSize(), 1)), batches: make([]*rxBatch, len(r.workers))}
	for i := range x.msgs {
		x.msgs[i].Buf = getBuf()
	}
	return x
}

// ready gives every message its buffer's full length back before a read.
func (x *rxScratch) ready() {
	for i := range x.msgs {
		x.msgs[i].Buf = x.msgs[i].Buf[:cap(x.msgs[i].Buf)]
	}
}

func (x *rxScratch) release() {
	for i := range x.msgs {
		putBuf(x.msgs[i].Buf)
	}
}

// receiveLoop reads batches of datagrams, drops what fails the checks that need no QP state, and
// hands the rest, batched per worker, to the workers. In latency mode it polls for BusyPoll after
// the last datagram before it waits again.
func (r *Runtime) receiveLoop() {
	defer r.rxWG.Done()
	x := r.newScratch()
	defer x.release()
	for {
		x.ready()
		n, err := r.spin(x.msgs)
		if n == 0 && err == nil {
			n, err = r.conn.Receive(x.msgs)
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
		// Every worker but one is woken to handle its batch in parallel; this goroutine runs the
		// last one itself, saving a hand-off, and reads again once that is done, so that
		// under load each read takes a larger batch.
		r.dispatch(x, n, false)
	}
}

// spin polls the network for up to rxPoll (BusyPoll or ReceivePoll) and returns what it read,
// yielding the processor between polls so that the goroutines the last read readied (an
// application waiting for its completions) run meanwhile. A goroutine that waits in the
// netpoller costs its thread a sleep and a wake-up in the kernel whenever the socket goes from
// empty to not empty, several µs each on a virtual machine, more than the protocol work of a
// small message; a stream whose next datagrams arrive within the bound never pays it. The bound
// is CPU time given up for that, not protocol time, so it is measured on the real clock even
// when the engines run on a fake one.
func (r *Runtime) spin(msgs []netio.Message) (int, error) {
	if r.rxPoll == 0 {
		return 0, nil
	}
	start := time.Now()
	for {
		n, err := r.conn.TryReceive(msgs)
		if n > 0 || err != nil || time.Since(start) >= r.rxPoll {
			return n, err
		}
		runtime.Gosched()
	}
}

// Poll reads the datagrams that have already arrived, without waiting, and runs their engines on
// the calling goroutine; it reports whether it read any. Latency mode calls it from a CQ poll
// that found nothing, so that a busy-polling application takes its packets off the network and
// sees their completions with no goroutine wake-up in between. It returns false at once while
// another goroutine polls.
func (r *Runtime) Poll() bool {
	if !r.pollMu.TryLock() {
		return false
	}
	defer r.pollMu.Unlock()
	if r.poll == nil {
		r.poll = r.newScratch()
	}
	x := r.poll
	x.ready()
	n, err := r.conn.TryReceive(x.msgs)
	if n == 0 || err != nil {
		return false // the receive goroutine meets and counts the same errors
	}
	r.dispatch(x, n, true)
	return true
}

// dispatch checks the first n datagrams of x and hands each worker its share: the worker of the
// last packet (every worker, with all set) runs on the calling goroutine if nobody runs it.
func (r *Runtime) dispatch(x *rxScratch, n int, all bool) {
	last := -1
	for i := range x.msgs[:n] {
		if w := r.classify(&x.msgs[i], x.batches); w >= 0 {
			last = w
		}
	}
	for i, b := range x.batches {
		if b == nil {
			continue
		}
		x.batches[i] = nil
		r.workers[i].deliver(b, all || i == last)
	}
}

// classify checks one datagram and, if it is for a QP of this device, moves it into the batch of
// that QP's worker (taking m's buffer and giving m a fresh one). It returns the index of the
// worker that got the packet (the last one for multicast), or -1 if it was dropped.
func (r *Runtime) classify(m *netio.Message, batches []*rxBatch) int {
	var p packet.Parsed
	if err := packet.Parse(m.Buf, &p); err != nil {
		r.dev.Inc(counter.RcvdMalformed)
		return -1
	}
	if !r.verifyICRC(m) {
		r.dev.Inc(counter.RcvdICRCErr)
		return -1
	}
	bth := p.BTH()
	// The P_Key table holds only the default key: accept it and its limited-member form.
	if bth.PKey()&packet.PKeyMembershipMask != packet.DefaultPKey&packet.PKeyMembershipMask {
		r.dev.Inc(counter.RcvdBadPKey)
		return -1
	}
	from := received(m)
	qpn := bth.DestQP()
	if qpn == packet.MulticastQPN {
		return r.fanOut(m, from, batches)
	}
	c := r.qps.lookup(qpn)
	if c == nil {
		r.dev.Inc(counter.RcvdUnknownQPN)
		return -1
	}
	add(batches, c, m.Buf, &p, from)
	m.Buf = getBuf()
	return c.w.idx
}

// add appends a packet for QP c to its worker's batch.
func add(batches []*rxBatch, c *QP, buf []byte, p *packet.Parsed, from packet.Envelope) {
	b := batches[c.w.idx]
	if b == nil {
		b = getBatch()
		batches[c.w.idx] = b
	}
	b.pkts = append(b.pkts, rxPacket{buf: buf, parsed: *p, from: from, qp: c})
}

// fanOut delivers a multicast packet to every QP attached to its destination group, each with its
// own copy, as rxe does.
func (r *Runtime) fanOut(m *netio.Message, from packet.Envelope, batches []*rxBatch) int {
	cores := r.mcast.members(m.Dst.Addr().Unmap().WithZone(""))
	if len(cores) == 0 {
		r.dev.Inc(counter.RcvdNoMcastGroup)
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
func (r *Runtime) verifyICRC(m *netio.Message) bool {
	src, dst := unmapPort(m.Src), unmapPort(m.Dst)
	if src.Addr().Is6() {
		env := packet.Envelope{Src: src, Dst: dst}
		return env.VerifyICRC(m.Buf) == nil
	}
	if r.cfg.Strict {
		env := packet.Envelope{Src: src, Dst: dst, IPFlags: packet.IPv4DontFragment}
		return env.VerifyICRC(m.Buf) == nil
	}
	_, _, err := packet.VerifyICRCIPv4AnyID(src, dst, m.Buf)
	return err == nil
}

func unmapPort(a netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(a.Addr().Unmap().WithZone(""), a.Port())
}
