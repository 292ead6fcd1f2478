package netio

import "sync/atomic"

// DropReason says why a datagram was dropped by a backend.
type DropReason uint8

// Drop reasons.
const (
	// DropQueueFull: a fabric endpoint's receive queue, or a UDP listening socket's receive
	// buffer, was full.
	DropQueueFull DropReason = iota
	// DropNoRoute: no fabric endpoint owns the destination address and port.
	DropNoRoute
	// DropTruncated: the datagram was larger than the buffer offered for it.
	DropTruncated
	// DropSendError: the kernel refused the datagram.
	DropSendError

	// NumDropReasons is the number of drop reasons, the length of [Counters.Drops].
	NumDropReasons
)

var dropReasonNames = [NumDropReasons]string{
	DropQueueFull: "queue-full",
	DropNoRoute:   "no-route",
	DropTruncated: "truncated",
	DropSendError: "send-error",
}

// String returns a short name for r.
func (r DropReason) String() string {
	if r < NumDropReasons {
		return dropReasonNames[r]
	}
	return "unknown"
}

// Counters is a snapshot of an endpoint's datagram counters. Bytes count UDP payload.
type Counters struct {
	SentDatagrams     uint64
	SentBytes         uint64
	ReceivedDatagrams uint64
	ReceivedBytes     uint64
	// Drops is indexed by DropReason.
	Drops [NumDropReasons]uint64

	// Segmentation offload (UDP backend only). A GSO send is one sendmmsg entry the kernel split
	// into GSOSegments datagrams; a GRO read is one coalesced buffer that held GROSegments of them.
	// SentDatagrams and ReceivedDatagrams already include the segments.
	GSOSends    uint64
	GSOSegments uint64
	GROReads    uint64
	GROSegments uint64
	// Fallbacks counts sockets that stopped using GSO after the kernel refused a segmented send
	// (which was then sent again as single datagrams), and listening sockets that could not
	// turn GRO on.
	GSOFallbacks uint64
	GROFallbacks uint64

	// System calls (UDP backend only): SendCalls sendmmsg calls, ReceiveCalls recvmmsg calls,
	// EmptyReceives the receive calls that found no datagram (a poll of an empty socket, or the
	// read before a wait in the netpoller). Retries after EINTR count as calls of their own.
	SendCalls     uint64
	ReceiveCalls  uint64
	EmptyReceives uint64

	// GroupJoins and GroupLeaves count the multicast groups the Conn joined and left (each a
	// membership the kernel announces with IGMP or MLD), not the repeated joins of one group.
	GroupJoins  uint64
	GroupLeaves uint64
}

// TotalDrops sums the drops over all reasons.
func (c Counters) TotalDrops() uint64 {
	var t uint64
	for _, d := range c.Drops {
		t += d
	}
	return t
}

// counters is the live, atomically updated form of Counters.
type counters struct {
	sentDatagrams     atomic.Uint64
	sentBytes         atomic.Uint64
	receivedDatagrams atomic.Uint64
	receivedBytes     atomic.Uint64
	drops             [NumDropReasons]atomic.Uint64
	gsoSends          atomic.Uint64
	gsoSegments       atomic.Uint64
	groReads          atomic.Uint64
	groSegments       atomic.Uint64
	gsoFallbacks      atomic.Uint64
	groFallbacks      atomic.Uint64
	sendCalls         atomic.Uint64
	receiveCalls      atomic.Uint64
	emptyReceives     atomic.Uint64
	groupJoins        atomic.Uint64
	groupLeaves       atomic.Uint64
}

func (c *counters) sent(datagrams, bytes int) {
	c.sentDatagrams.Add(uint64(datagrams))
	c.sentBytes.Add(uint64(bytes))
}

func (c *counters) received(datagrams, bytes int) {
	c.receivedDatagrams.Add(uint64(datagrams))
	c.receivedBytes.Add(uint64(bytes))
}

func (c *counters) drop(r DropReason) { c.drops[r].Add(1) }

func (c *counters) gsoSent(segments int) {
	c.gsoSends.Add(1)
	c.gsoSegments.Add(uint64(segments))
}

func (c *counters) groRead(segments int) {
	c.groReads.Add(1)
	c.groSegments.Add(uint64(segments))
}

func (c *counters) snapshot() Counters {
	s := Counters{
		SentDatagrams:     c.sentDatagrams.Load(),
		SentBytes:         c.sentBytes.Load(),
		ReceivedDatagrams: c.receivedDatagrams.Load(),
		ReceivedBytes:     c.receivedBytes.Load(),
		GSOSends:          c.gsoSends.Load(),
		GSOSegments:       c.gsoSegments.Load(),
		GROReads:          c.groReads.Load(),
		GROSegments:       c.groSegments.Load(),
		GSOFallbacks:      c.gsoFallbacks.Load(),
		GROFallbacks:      c.groFallbacks.Load(),
		SendCalls:         c.sendCalls.Load(),
		ReceiveCalls:      c.receiveCalls.Load(),
		EmptyReceives:     c.emptyReceives.Load(),
		GroupJoins:        c.groupJoins.Load(),
		GroupLeaves:       c.groupLeaves.Load(),
	}
	for i := range c.drops {
		s.Drops[i] = c.drops[i].Load()
	}
	return s
}
