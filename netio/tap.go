package netio

// Direction says whether a tapped datagram was sent or received.
type Direction uint8

// Directions of tapped datagrams.
const (
	Sent Direction = iota
	Received
)

func (d Direction) String() string {
	if d == Sent {
		return "sent"
	}
	return "received"
}

// TapFunc observes one datagram. It must not keep m or m.Buf after it returns, and it runs on the
// goroutine that sent or received the datagram, so it should be quick.
type TapFunc func(dir Direction, m *Message)

// Tap returns a Conn that behaves like c and shows fn every datagram c accepted for sending and
// every datagram it received: the hook for packet summaries and capture files, which need to see
// traffic without owning the connection.
func Tap(c Conn, fn TapFunc) Conn { return &tapConn{Conn: c, fn: fn} }

type tapConn struct {
	Conn
	fn TapFunc
}

func (t *tapConn) Send(msgs []Message) (int, error) {
	n, err := t.Conn.Send(msgs)
	for i := range msgs[:n] {
		t.fn(Sent, &msgs[i])
	}
	return n, err
}

func (t *tapConn) Receive(msgs []Message) (int, error) {
	n, err := t.Conn.Receive(msgs)
	for i := range msgs[:n] {
		t.fn(Received, &msgs[i])
	}
	return n, err
}

var _ Conn = (*tapConn)(nil)
