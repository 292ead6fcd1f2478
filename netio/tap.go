package netio

import "strings"

// Direction says what happened to a tapped datagram: where it went (Sent, Received, Lost) and,
// under fault injection, what the faults did to it (the marks Duplicate, Corrupt and Delayed,
// OR'ed into a Sent direction).
type Direction uint8

// Where a tapped datagram went.
const (
	Sent     Direction = iota
	Received           // taken from the network
	Lost               // dropped by fault injection instead of reaching the network
)

// Marks fault injection adds to a Sent direction.
const (
	Duplicate Direction = 1 << (iota + 4) // an extra copy the faults added
	Corrupt                               // a copy with one bit flipped
	Delayed                               // held back by a delay or reordering, sent late

	markMask = Duplicate | Corrupt | Delayed
)

// Base returns the direction without its fault marks.
func (d Direction) Base() Direction { return d &^ markMask }

// Has reports whether d carries every mark in m.
func (d Direction) Has(m Direction) bool { return d&m == m }

// Marks returns the fault marks' names, e.g. ["duplicate", "corrupted"]; nil when there are none.
func (d Direction) Marks() []string {
	var s []string
	for _, m := range [...]struct {
		bit  Direction
		name string
	}{{Duplicate, "duplicate"}, {Corrupt, "corrupted"}, {Delayed, "delayed"}} {
		if d.Has(m.bit) {
			s = append(s, m.name)
		}
	}
	return s
}

func (d Direction) String() string {
	var base string
	switch d.Base() {
	case Sent:
		base = "sent"
	case Received:
		base = "received"
	case Lost:
		base = "lost"
	default:
		base = "unknown"
	}
	if marks := d.Marks(); marks != nil {
		return base + " (" + strings.Join(marks, ", ") + ")"
	}
	return base
}

// TapFunc observes one datagram. It must not keep m or m.Buf after it returns, and it runs on the
// goroutine that sent or received the datagram, so it should be quick.
type TapFunc func(dir Direction, m *Message)

// Tap returns a Conn that behaves like c and shows fn every datagram handed to it for sending and
// every datagram it received: the hook for packet summaries and capture files, which need to see
// traffic without owning the connection. Outgoing datagrams are shown before they are sent, so an
// observer sees a request before the answer it provokes. Over a [FaultConn], use
// [FaultConn.Observe] instead, which also shows what the faults did, in wire order.
func Tap(c Conn, fn TapFunc) Conn { return &tapConn{Conn: c, fn: fn} }

type tapConn struct {
	Conn
	fn TapFunc
}

func (t *tapConn) Send(msgs []Message) (int, error) {
	for i := range msgs {
		t.fn(Sent, &msgs[i])
	}
	return t.Conn.Send(msgs)
}

// NewSender returns a Sender that shows fn what it sends, then sends it through a Sender of the
// tapped connection (see [NewSender]).
func (t *tapConn) NewSender() Sender { return &tapSender{fn: t.fn, inner: NewSender(t.Conn)} }

var _ senderSource = (*tapConn)(nil)

type tapSender struct {
	fn    TapFunc
	inner Sender
}

func (t *tapSender) Send(msgs []Message) (int, error) {
	for i := range msgs {
		t.fn(Sent, &msgs[i])
	}
	return t.inner.Send(msgs)
}

func (t *tapConn) Receive(msgs []Message) (int, error) {
	n, err := t.Conn.Receive(msgs)
	for i := range msgs[:n] {
		eachDatagram(&msgs[i], func(d *Message) { t.fn(Received, d) })
	}
	return n, err
}

func (t *tapConn) TryReceive(msgs []Message) (int, error) {
	n, err := t.Conn.TryReceive(msgs)
	for i := range msgs[:n] {
		eachDatagram(&msgs[i], func(d *Message) { t.fn(Received, d) })
	}
	return n, err
}

func (t *tapConn) receivesFrom() Conn { return t.Conn }

var _ Conn = (*tapConn)(nil)
