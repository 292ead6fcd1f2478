package netio

import (
	"fmt"
	"net"
	"net/netip"
	"sync"
)

// Endpoint is a device's attachment to a [Fabric]: a [Conn] listening on one port at one or more
// addresses. Any source port may be used on Send, as with the UDP backend's source-port sockets.
type Endpoint struct {
	fabric *Fabric
	locals []netip.AddrPort

	mu     sync.Mutex // guards queue and closed
	queue  []queuedDatagram
	head   int      // index of the oldest queued datagram
	count  int      // number of queued datagrams
	free   [][]byte // buffers of dequeued datagrams, reused last-in first-out so few stay warm
	closed bool

	notify chan struct{} // a token when the queue becomes non-empty
	done   chan struct{} // closed by Close

	counters counters

	joined map[netip.AddrPort]int // joins of each group and port; guarded by fabric.mu
}

var _ Conn = (*Endpoint)(nil)

// queuedDatagram is a slot of the receive ring.
type queuedDatagram struct {
	buf      []byte
	src, dst netip.AddrPort
	tos, ttl uint8
}

func newEndpoint(f *Fabric, locals []netip.AddrPort, queueLen int) *Endpoint {
	return &Endpoint{
		fabric: f,
		locals: locals,
		queue:  make([]queuedDatagram, queueLen),
		free:   make([][]byte, 0, queueLen),
		notify: make(chan struct{}, 1),
		done:   make(chan struct{}),
	}
}

// Send implements [Conn]. Datagrams go out in order; with no faults and no Hold they are in the
// receiver's queue when Send returns.
func (e *Endpoint) Send(msgs []Message) (int, error) {
	if e.isClosed() {
		return 0, net.ErrClosed
	}
	for i := range msgs {
		m := &msgs[i]
		li, err := pickSource(e.locals, m)
		if err != nil {
			return i, fmt.Errorf("send %v -> %v: %w", m.Src, m.Dst, err)
		}
		if m.SegmentSize != 0 {
			return i, ErrSegmentSize
		}
		local := e.locals[li]
		if len(m.Buf) > maxPayload(local.Addr()) {
			return i, ErrMessageTooLong
		}
		out := *m
		port := m.Src.Port()
		if port == 0 {
			port = local.Port()
		}
		out.Src = netip.AddrPortFrom(local.Addr(), port)
		out.Dst = netip.AddrPortFrom(m.Dst.Addr().Unmap(), m.Dst.Port())
		if out.TTL == 0 {
			out.TTL = DefaultTTL
		}
		e.counters.sent(1, len(m.Buf))
		e.fabric.transmit(e, &out, local.Addr())
	}
	return len(msgs), nil
}

// enqueue copies m into the receive ring, flipping corruptBit unless it is -1.
func (e *Endpoint) enqueue(m *Message, corruptBit int) {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return
	}
	if e.count == len(e.queue) {
		e.mu.Unlock()
		e.counters.drop(DropQueueFull)
		return
	}
	q := &e.queue[(e.head+e.count)%len(e.queue)]
	var buf []byte
	if n := len(e.free); n > 0 {
		buf, e.free = e.free[n-1], e.free[:n-1]
	}
	q.buf = append(buf[:0], m.Buf...)
	flipBit(q.buf, corruptBit)
	q.src, q.dst, q.tos, q.ttl = m.Src, m.Dst, m.TOS, m.TTL
	e.count++
	wake := e.count == 1
	e.mu.Unlock()
	if wake {
		e.wake()
	}
}

func (e *Endpoint) wake() {
	select {
	case e.notify <- struct{}{}:
	default:
	}
}

// Receive implements [Conn].
func (e *Endpoint) Receive(msgs []Message) (int, error) {
	if err := validateReceive(msgs); err != nil {
		return 0, err
	}
	if len(msgs) == 0 {
		return 0, nil
	}
	for {
		n, more, err := e.dequeue(msgs)
		if more {
			e.wake() // let another receiver take the rest
		}
		if n > 0 || err != nil {
			return n, err
		}
		select {
		case <-e.notify:
		case <-e.done:
			return 0, net.ErrClosed
		}
	}
}

// WaitReadable implements [ReadableWaiter].
func (e *Endpoint) WaitReadable() error {
	for {
		e.mu.Lock()
		queued, closed := e.count, e.closed
		e.mu.Unlock()
		switch {
		case closed:
			return net.ErrClosed
		case queued > 0:
			return nil
		}
		select {
		case <-e.notify:
		case <-e.done:
			return net.ErrClosed
		}
	}
}

// TryReceive implements [Conn].
func (e *Endpoint) TryReceive(msgs []Message) (int, error) {
	if err := validateReceive(msgs); err != nil {
		return 0, err
	}
	n, more, err := e.dequeue(msgs)
	if more {
		e.wake() // a waiting receiver may take the rest
	}
	return n, err
}

// dequeue moves queued datagrams into msgs and reports whether more remain.
func (e *Endpoint) dequeue(msgs []Message) (n int, more bool, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return 0, false, net.ErrClosed
	}
	bytes := 0
	for e.count > 0 && n < len(msgs) {
		q := &e.queue[e.head]
		e.head = (e.head + 1) % len(e.queue)
		e.count--
		buf := q.buf
		q.buf = nil
		e.free = append(e.free, buf)
		m := &msgs[n]
		if len(buf) > cap(m.Buf) {
			e.counters.drop(DropTruncated)
			continue
		}
		m.Buf = append(m.Buf[:0], buf...)
		m.Src, m.Dst, m.TOS, m.TTL, m.SegmentSize = q.src, q.dst, q.tos, q.ttl, 0
		bytes += len(buf)
		n++
	}
	e.counters.received(n, bytes)
	return n, e.count > 0, nil
}

// Queued returns the number of datagrams waiting to be received.
func (e *Endpoint) Queued() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.count
}

// BatchSize implements [Conn].
func (e *Endpoint) BatchSize() int { return IdealBatchSize }

// ReceiveBufSize implements [Conn]: the fabric delivers datagrams one by one.
func (e *Endpoint) ReceiveBufSize() int { return 0 }

// LocalAddrs implements [Conn].
func (e *Endpoint) LocalAddrs() []netip.AddrPort { return append([]netip.AddrPort(nil), e.locals...) }

// Counters implements [Conn].
func (e *Endpoint) Counters() Counters { return e.counters.snapshot() }

// Close implements [Conn]: it detaches the endpoint from the fabric, discards its queue and
// unblocks Receive.
func (e *Endpoint) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return net.ErrClosed
	}
	e.closed = true
	e.queue, e.count, e.free = nil, 0, nil
	close(e.done)
	e.mu.Unlock()
	e.fabric.detach(e)
	return nil
}

func (e *Endpoint) isClosed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed
}
