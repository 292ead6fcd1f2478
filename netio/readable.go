package netio

// A ReadableWaiter waits for datagrams without reading them, so that a reader can sleep holding
// none and then read under a lock that a busy poller reads under too: datagrams then reach their
// handlers in the order they left the network, whichever of the two read them. [UDPConn] and
// [Endpoint] are ReadableWaiters.
type ReadableWaiter interface {
	// WaitReadable blocks until a datagram waits to be read or the Conn is closed
	// (net.ErrClosed). It may return early: the caller reads with TryReceive and waits again
	// when that finds nothing.
	WaitReadable() error
}

// Waiter returns the ReadableWaiter that tells when c has datagrams: c itself, or the Conn under
// a [Tap] or a [FaultConn], whose receive sides hand its datagrams on unchanged. It reports false
// when there is none, as for a Conn of the caller's own making without WaitReadable.
func Waiter(c Conn) (ReadableWaiter, bool) {
	for {
		if w, ok := c.(ReadableWaiter); ok {
			return w, true
		}
		p, ok := c.(passThrough)
		if !ok {
			return nil, false
		}
		c = p.receivesFrom()
	}
}

// A PollableConn receives its datagrams on file descriptors that a program may wait on with
// poll(2), reading them afterwards with TryReceive, never from the descriptors. [UDPConn] is one.
type PollableConn interface {
	// ReadableFDs appends to dst the descriptors datagrams arrive on; none once closed. They
	// stay the Conn's: a joined or left multicast group changes them, and Close closes them.
	ReadableFDs(dst []int) []int
}

// ReadableFDs appends to dst the file descriptors c's datagrams arrive on: those of c itself, or
// of the Conn under a [Tap] or a [FaultConn]. It appends none for a Conn without any.
func ReadableFDs(c Conn, dst []int) []int {
	for {
		if p, ok := c.(PollableConn); ok {
			return p.ReadableFDs(dst)
		}
		w, ok := c.(passThrough)
		if !ok {
			return dst
		}
		c = w.receivesFrom()
	}
}

// passThrough is a wrapper whose Receive and TryReceive return its inner Conn's datagrams, so
// that the inner Conn's readiness is its own.
type passThrough interface{ receivesFrom() Conn }

var (
	_ ReadableWaiter = (*Endpoint)(nil)
	_ passThrough    = (*tapConn)(nil)
	_ passThrough    = (*FaultConn)(nil)
)
