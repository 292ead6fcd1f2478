package transport

import (
	"net/netip"

	"github.com/gorxe/gorxe/packet"
)

// MaxPacketSize is the largest RoCEv2 packet (BTH to ICRC) the engine builds: a 4096-byte payload
// with the largest header set and the ICRC.
const MaxPacketSize = 4096 + 64

// sameHost reports whether a and b are the same IP address, ignoring IPv4 mapping and IPv6 zones.
// A GID has no zone, but the stack reports link-local addresses (GID index 0) with the zone of
// the interface they arrived on, and the path's own end may carry it too: comparing zones would
// reject every packet between two link-local GIDs.
func sameHost(a, b netip.Addr) bool {
	return a.Unmap().WithZone("") == b.Unmap().WithZone("")
}

// Packet is one datagram the engine produced: Buf holds the RoCEv2 packet from the BTH to the ICRC,
// Env the IP/UDP framing it leaves with (Src port the QP's UDP source port, Dst port 4791) and
// that its ICRC covers.
//
// A packet whose Payload is set (see Output.Views) is held in three pieces: Buf holds its headers,
// Payload is its payload where it lies in registered memory, and Tail its pad bytes and ICRC, in
// the buffer Buf starts.
type Packet struct {
	Buf     []byte
	Payload []byte
	Tail    []byte
	Env     packet.Envelope
}

// Output collects the packets produced by one call into the engine. The device layer supplies
// buffers (pooled, each at least MaxPacketSize long) through Alloc and takes the packets away
// after the call; the engine never keeps a reference to a buffer it has appended.
type Output struct {
	Packets []Packet
	// Alloc returns an empty buffer with capacity of at least MaxPacketSize.
	Alloc func() []byte

	// Events collects what the call did that the device may log (see Event), of the kinds in
	// Want only: with Want empty nothing is recorded, so a device that logs nothing pays
	// nothing. The device takes the events away after each call (ResetEvents).
	Events []Event
	Want   EventMask

	// Views lets the engines leave a payload of 1 KiB or more in registered memory
	// (Packet.Payload) instead of copying it into the packet's buffer, for a device whose network
	// takes datagrams in pieces. Such a device must send the packets before the program's
	// deregistration of a region they came from returns (mr.Table.View).
	Views bool

	// Completions counts the work completions the calls delivered to CQs (or tried to) since the
	// device last reset it. A completion may wake a goroutine waiting on a CQ, which the device
	// then lets run before a long send (see internal/stack's worker).
	Completions int
}

// Reset forgets the collected packets, keeping the slice for reuse, and the completion count.
func (o *Output) Reset() {
	o.Packets = o.Packets[:0]
	o.Completions = 0
}

// ResetEvents forgets the collected events, keeping the slice for reuse.
func (o *Output) ResetEvents() { o.Events = o.Events[:0] }

// asSent returns e as gorxe's sockets put it on the wire: IPv4 packets leave an unconnected
// socket with DF set and IP ID 0, which the ICRC covers.
func asSent(e packet.Envelope) packet.Envelope {
	e.IPID = 0
	e.IPFlags = 0
	if e.Src.Addr().Unmap().Is4() {
		e.IPFlags = packet.IPv4DontFragment
	}
	return e
}

// build encodes a packet with headers h and room for payloadLen payload bytes into a fresh output
// buffer. The caller fills the payload in place through the returned slice (straight from
// registered memory), then calls finish.
func (o *Output) build(h *packet.Headers, payloadLen int) (pkt, payload []byte) {
	pkt, payload, err := packet.AppendPacketRoom(o.Alloc()[:0], h, payloadLen)
	if err != nil {
		panic("transport: engine built an invalid packet: " + err.Error())
	}
	return pkt, payload
}

// minViewPayload is the smallest payload Views leaves in registered memory. A small payload's
// copy costs about what the kernel's two more I/O vectors do (1 KiB at MTU 1024 measured the same
// either way), and a 64-byte SEND keeps its datagram in one piece.
const minViewPayload = 1024

// wantsView reports whether a payload of n bytes is to be left in registered memory: the output
// takes views and the payload is long enough to be worth one (minViewPayload).
func (o *Output) wantsView(n int) bool { return o.Views && n >= minViewPayload }

// finishPayload queues pkt as finish does, or, when view is set, as finishView does.
func (o *Output) finishPayload(pkt []byte, hdrLen int, view []byte, env *packet.Envelope) {
	if view != nil {
		o.finishView(pkt, hdrLen, view, env)
	} else {
		o.finish(pkt, env)
	}
}

// finishView queues pkt, built by build with room for a payload of len(view) bytes after hdrLen
// bytes of headers, as a packet whose payload is view, a slice of registered memory, and computes
// its ICRC for the framing env.
func (o *Output) finishView(pkt []byte, hdrLen int, view []byte, env *packet.Envelope) {
	head, tail := pkt[:hdrLen], pkt[hdrLen+len(view):]
	if err := env.PutICRCParts(head, view, tail); err != nil {
		panic("transport: ICRC of a built packet: " + err.Error())
	}
	o.Packets = append(o.Packets, Packet{Buf: head, Payload: view, Tail: tail, Env: *env})
}

// finish computes the ICRC of pkt for the framing env (resolved by Env.Route, so as sent) and
// queues it.
func (o *Output) finish(pkt []byte, env *packet.Envelope) {
	if err := env.PutICRC(pkt); err != nil {
		panic("transport: ICRC of a built packet: " + err.Error())
	}
	o.Packets = append(o.Packets, Packet{Buf: pkt, Env: *env})
}
