package netio

// Direction says what happened to a tapped datagram.
type Direction uint8

// Directions of tapped datagrams.
const (
	Sent     Direction = iota
	Received           // taken from the network
	Lost               // dropped by fault injection before it reached the network (FaultConn.Observe)
)

func (d Direction) String() string {
	switch d {
	case Sent:
		return "sent"
	case Received:
		return "received"
	}
	return "lost"
}

// TapFunc observes one datagram. It must not keep m or m.Buf after it returns, and it runs on the
// goroutine that sent or received the datagram, so it should be quick.
type TapFunc func(dir Direction, m *Message)

// Tap returns a Conn that behaves like c and shows fn every datagram handed to it for sending and
// every datagram it received: the hook for packet summaries and capture files, which need to see
// traffic without owning the connection. Outgoing datagrams are shown before they are sent, so an
// observer sees a request before the answer it provokes.
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

func (t *tapConn) Receive(msgs []Message) (int, error) {
	n, err := t.Conn.Receive(msgs)
	for i := range msgs[:n] {
		t.fn(Received, &msgs[i])
	}
	return n, err
}

var _ Conn = (*tapConn)(nil)
