package netio

import (
	"net/netip"
	"sync"

	"github.com/gorxe/gorxe/clock"
)

// FaultConn wraps any [Conn] and impairs the datagrams sent through it according to a
// [FaultConfig]. Faults apply on Send only: a lossy path between two Conns is modelled by wrapping
// the sender, which keeps Receive untouched and the inner Conn's counters exact. Delayed, reordered
// and duplicated-late datagrams are copied and sent through the inner Conn when their delay
// expires, on the clock's timer; errors from those late sends show in the inner Conn's counters.
// The caller's buffers are never modified: a corrupted datagram is a corrupted copy.
type FaultConn struct {
	inner Conn
	line  *delayLine

	mu      sync.Mutex // serialises Send: the generator, the scratch below and the inner Send
	engine  *faultEngine
	out     []Message // datagrams to send now
	origin  []int     // index in the caller's msgs of each entry of out
	scratch [][]byte  // corrupted and duplicated copies, reused
	observe TapFunc   // shown every datagram in wire order with its fate; nil when nobody asked
}

var _ Conn = (*FaultConn)(nil)

// WithFaults wraps c. clk times delays; nil means clock.Real.
func WithFaults(c Conn, cfg FaultConfig, clk clock.Clock) (*FaultConn, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if clk == nil {
		clk = clock.Real{}
	}
	fc := &FaultConn{inner: c, engine: newFaultEngine(cfg)}
	fc.line = newDelayLine(clk, fc.sendLate)
	return fc, nil
}

// Observe makes fn see every datagram in the order the network gets it, with what the faults did:
// a dropped datagram as Lost at the place it would have taken, each copy sent now as Sent with its
// marks (Duplicate, Corrupt; the corrupted bytes as sent), a delayed or reordered copy as
// Sent|Delayed when it is finally sent, and received datagrams as Received. It replaces a [Tap]
// around the inner Conn, which could not show a loss in its place among the datagrams of a batch.
// Call it before the first Send.
func (c *FaultConn) Observe(fn TapFunc) { c.observe = fn }

// Send implements [Conn]. A datagram the faults drop counts as sent. If the inner Conn refuses a
// datagram, Send returns the index of the caller's message it came from.
func (c *FaultConn) Send(msgs []Message) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.out, c.origin = c.out[:0], c.origin[:0]
	copies := 0 // scratch buffers used by this call
	for i := range msgs {
		m := &msgs[i]
		p := c.engine.plan(len(m.Buf))
		if p.drop {
			if c.observe != nil {
				c.observe(Lost, m)
			}
			continue
		}
		for k := 0; k < p.copies; k++ {
			if p.delay[k] > 0 {
				c.line.add(m, p.corruptBit, p.delay[k], p.direction(k))
				continue
			}
			out := *m
			// A corrupted copy is a copy; so is a duplicate, which may share a UDP_SEGMENT send
			// with the original and so get another IPv4 ID, and with it another ICRC, written
			// into its own bytes (UDPConfig.SetIPv4ID).
			if p.corruptBit >= 0 || k > 0 {
				if copies == len(c.scratch) {
					c.scratch = append(c.scratch, nil)
				}
				c.scratch[copies] = append(c.scratch[copies][:0], m.Buf...)
				flipBit(c.scratch[copies], p.corruptBit)
				out.Buf = c.scratch[copies]
				copies++
			}
			if c.observe != nil {
				c.observe(p.direction(k), &out)
			}
			c.out = append(c.out, out)
			c.origin = append(c.origin, i)
		}
	}
	sent := 0
	for sent < len(c.out) {
		n, err := c.inner.Send(c.out[sent:])
		sent += n
		if err != nil {
			o := c.origin[sent]
			c.clearOut()
			return o, err
		}
	}
	c.clearOut()
	return len(msgs), nil
}

// clearOut drops references to the caller's buffers.
func (c *FaultConn) clearOut() {
	for i := range c.out {
		c.out[i] = Message{}
	}
}

// sendLate sends datagrams whose delay expired, skipping any the inner Conn refuses.
func (c *FaultConn) sendLate(batch []Message, dirs []Direction) {
	if c.observe != nil {
		for i := range batch {
			c.observe(dirs[i], &batch[i])
		}
	}
	for len(batch) > 0 {
		n, err := c.inner.Send(batch)
		if err != nil {
			n++
		}
		batch = batch[n:]
	}
}

// FaultCounters returns what the faults have done so far.
func (c *FaultConn) FaultCounters() FaultCounters { return c.engine.counters.snapshot() }

// InFlight returns the number of datagrams held back by delay or reordering.
func (c *FaultConn) InFlight() int { return c.line.len() }

// Receive implements [Conn] by passing through to the inner Conn.
func (c *FaultConn) Receive(msgs []Message) (int, error) {
	n, err := c.inner.Receive(msgs)
	if c.observe != nil {
		for i := range msgs[:n] {
			eachDatagram(&msgs[i], func(d *Message) { c.observe(Received, d) })
		}
	}
	return n, err
}

// TryReceive implements [Conn] by passing through to the inner Conn.
func (c *FaultConn) TryReceive(msgs []Message) (int, error) {
	n, err := c.inner.TryReceive(msgs)
	if c.observe != nil {
		for i := range msgs[:n] {
			eachDatagram(&msgs[i], func(d *Message) { c.observe(Received, d) })
		}
	}
	return n, err
}

func (c *FaultConn) receivesFrom() Conn { return c.inner }

// BatchSize implements [Conn].
func (c *FaultConn) BatchSize() int { return c.inner.BatchSize() }

// ReceiveBufSize implements [Conn].
func (c *FaultConn) ReceiveBufSize() int { return c.inner.ReceiveBufSize() }

// LocalAddrs implements [Conn].
func (c *FaultConn) LocalAddrs() []netip.AddrPort { return c.inner.LocalAddrs() }

// Counters implements [Conn] with the inner Conn's counters.
func (c *FaultConn) Counters() Counters { return c.inner.Counters() }

// Close discards held datagrams and closes the inner Conn.
func (c *FaultConn) Close() error {
	c.line.close()
	return c.inner.Close()
}
