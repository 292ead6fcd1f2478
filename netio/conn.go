package netio

import (
	"net/netip"
)

// DefaultPort is the IANA-assigned RoCEv2 UDP destination port.
const DefaultPort = 4791

// IdealBatchSize is the number of datagrams a backend moves per system call or hand-off when the
// caller offers that many. Larger batches gain little once the per-datagram kernel cost dominates.
const IdealBatchSize = 64

// CoalesceBufSize is the buffer capacity from which a received [Message] may hold a coalesced run
// of datagrams rather than one (see Message.SegmentSize): the largest buffer the kernel's UDP
// generic receive offload hands a socket.
const CoalesceBufSize = 1 << 16

// DefaultTTL is the hop limit a datagram is sent with when its TTL is zero, matching Linux's
// default for IPv4 and IPv6.
const DefaultTTL = 64

// Message is one UDP datagram on its way out or in.
//
// On Send, Buf holds the UDP payload (its length is the datagram size), Dst is required, Src selects
// the local address and source port (see [Conn.Send]), and TOS and TTL set the IPv4 TOS / IPv6
// traffic class and the IPv4 TTL / IPv6 hop limit. A TTL of zero means [DefaultTTL].
//
// On Receive, the datagram is written into Buf[:cap(Buf)] and Buf is re-sliced to its length; Src is
// the sender's address and port, and Dst the local address and port it arrived on. The UDP backend
// does not report TOS and TTL (zero); the fabric delivers them as sent.
type Message struct {
	Buf []byte
	Src netip.AddrPort
	Dst netip.AddrPort
	TOS uint8
	TTL uint8

	// SegmentSize reports, on Receive, that the datagram arrived coalesced with others of its
	// flow (UDP generic receive offload) and the size the kernel gave for them: every datagram
	// of the coalesced buffer has this size except perhaps the last, which may be shorter. Zero
	// means the datagram arrived on its own. A message offered a buffer of less than
	// [CoalesceBufSize] holds exactly one datagram; one offered at least that may receive the
	// whole run, which saves copying it out: Buf then holds consecutive datagrams, all from Src
	// to Dst ([Message.Datagrams], [Message.Datagram]).
	// On Send it is reserved and must be zero: the UDP backend coalesces runs of datagrams
	// itself (see [UDPConn.Send]).
	SegmentSize uint16

	// Payload and Tail continue a datagram to send after Buf: the datagram is Buf, then Payload,
	// then Tail, given to the kernel as I/O vectors of their own, so that a payload in registered
	// memory goes out without first being copied next to its headers. Only a [VectorSender] takes
	// them (the UDP backend on Linux); they are never set on a received datagram, nor on one a
	// [Fabric], a [FaultConn] or a [Tap] is given.
	Payload []byte
	Tail    []byte
}

// Len returns the length of the datagram: Buf's, and Payload's and Tail's (see Payload).
func (m *Message) Len() int { return len(m.Buf) + len(m.Payload) + len(m.Tail) }

// VectorSender is a Conn whose Send takes a datagram in pieces ([Message.Payload] and Tail).
type VectorSender interface {
	Conn
	SendsVectors() bool
}

// Datagrams returns the number of datagrams a received message holds: one, or the length of a
// coalesced run (see SegmentSize).
func (m *Message) Datagrams() int {
	seg := int(m.SegmentSize)
	if seg == 0 || len(m.Buf) <= seg {
		return 1
	}
	return (len(m.Buf) + seg - 1) / seg
}

// Datagram returns datagram i of a received message, 0 <= i < m.Datagrams(), as a view of Buf.
func (m *Message) Datagram(i int) []byte {
	seg := int(m.SegmentSize)
	if seg == 0 || len(m.Buf) <= seg {
		return m.Buf
	}
	return m.Buf[i*seg : min((i+1)*seg, len(m.Buf)) : min((i+1)*seg, len(m.Buf))]
}

// eachDatagram calls f with m standing for each of its datagrams in turn: for a coalesced run,
// m.Buf is the datagram during the call and the run again afterwards.
func eachDatagram(m *Message, f func(*Message)) {
	run := *m
	for i := range run.Datagrams() {
		m.Buf = run.Datagram(i)
		f(m)
	}
	m.Buf = run.Buf
}

// Sender sends batches of datagrams as [Conn.Send] does, for one goroutine at a time: a caller
// that sends often from one goroutine (a device's worker) keeps one, which owns what its system
// calls need, so that senders on different cores share no lock and no written memory.
type Sender interface {
	Send(msgs []Message) (n int, err error)
}

// NewSender returns a Sender on c for one goroutine at a time: one with scratch of its own when c
// offers it (a [UDPConn], or a [Tap] over one), and c itself otherwise, whose Send serves any
// goroutine. A connection that wraps another by embedding the Conn interface therefore sends
// through its own Send.
func NewSender(c Conn) Sender {
	if sc, ok := c.(senderSource); ok {
		return sc.NewSender()
	}
	return c
}

// senderSource is a Conn with Senders of its own, which NewSender finds by type assertion: a
// connection that stopped offering them would go on working, every goroutine sharing its Send,
// so the ones that must offer them say so at compile time.
type senderSource interface{ NewSender() Sender }

// Conn sends and receives batches of datagrams on a set of local addresses. All methods are safe for
// concurrent use.
type Conn interface {
	// Send transmits msgs in order. Each message's Src address must be one of LocalAddrs (or
	// invalid, meaning the first local address of Dst's family), and its Src port selects the
	// socket it leaves from: 0 or the listening port for the listening socket, any other port for
	// a socket bound to that port. It returns the number of messages handed to the network; if
	// that is less than len(msgs), err explains why msgs[n] was not sent, and the caller may retry
	// or skip it. A datagram that is lost later (queue full, no such peer) counts as sent.
	Send(msgs []Message) (n int, err error)

	// Receive blocks until at least one datagram has arrived, fills up to len(msgs) messages and
	// returns how many it filled. Every msgs[i].Buf must have non-zero capacity. A datagram larger
	// than the buffer offered for it is dropped and counted. After Close it returns an error
	// matching net.ErrClosed.
	Receive(msgs []Message) (n int, err error)

	// TryReceive is Receive without the wait: it fills messages with datagrams that have already
	// arrived and returns 0 at once when none have. It may run while another goroutine waits in
	// Receive (each datagram goes to one of them), which lets a caller that busy-polls take
	// datagrams without a goroutine wake-up.
	TryReceive(msgs []Message) (n int, err error)

	// BatchSize is the number of messages a caller should offer per Send or Receive.
	BatchSize() int

	// ReceiveBufSize is [CoalesceBufSize] when Receive may deliver coalesced runs to messages
	// offered buffers that large, and 0 when it delivers datagrams one by one whatever the
	// buffer.
	ReceiveBufSize() int

	// LocalAddrs returns the listening addresses and port, one per local address.
	LocalAddrs() []netip.AddrPort

	// Counters returns a snapshot of the datagram counters.
	Counters() Counters

	// Close releases the sockets or queues and unblocks Receive. Further calls fail with an error
	// matching net.ErrClosed.
	Close() error
}

// maxPayload is the largest UDP payload an IP datagram can carry from addr's family.
func maxPayload(addr netip.Addr) int {
	if addr.Is4() {
		return 65535 - 20 - 8
	}
	return 65535 - 8
}

// pickSource checks m's addresses and returns the index in locals of the address it leaves from.
func pickSource(locals []netip.AddrPort, m *Message) (int, error) {
	dst := m.Dst.Addr().Unmap()
	if !dst.IsValid() || dst.IsUnspecified() || m.Dst.Port() == 0 {
		return 0, ErrBadDestination
	}
	src := m.Src.Addr().Unmap().WithZone("")
	if !src.IsValid() || src.IsUnspecified() {
		for i, l := range locals {
			if l.Addr().Is4() == dst.Is4() {
				return i, nil
			}
		}
		return 0, ErrNoSourceAddress
	}
	if src.Is4() != dst.Is4() {
		return 0, ErrAddressFamily
	}
	for i, l := range locals {
		if l.Addr().WithZone("") == src {
			return i, nil
		}
	}
	return 0, ErrUnknownSource
}

// validateReceive reports whether every message offers buffer space.
func validateReceive(msgs []Message) error {
	for i := range msgs {
		if cap(msgs[i].Buf) == 0 {
			return ErrEmptyBuffer
		}
	}
	return nil
}
