package stack

import (
	"sync"
	"sync/atomic"

	"github.com/gorxe/gorxe/netio"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/transport"
)

// pktBuf is one pooled packet buffer, large enough for any packet the transport builds or a peer
// may send at MTU 4096.
type pktBuf = [transport.MaxPacketSize]byte

var bufPool = sync.Pool{New: func() any { return new(pktBuf) }}

// getBuf returns a pooled buffer as a full-length slice.
func getBuf() []byte { return bufPool.Get().(*pktBuf)[:] }

// putBuf returns a buffer obtained from getBuf (possibly re-sliced from its start). Slices of any
// other memory are left to the garbage collector.
func putBuf(b []byte) {
	if cap(b) != transport.MaxPacketSize {
		return
	}
	bufPool.Put((*pktBuf)(b[:transport.MaxPacketSize]))
}

// rxChunk is a buffer of netio.CoalesceBufSize bytes that the network reads a coalesced run of
// datagrams into. The packets cut from it go to the workers as views of it, with no copy, and
// the last one handled returns it to the pool.
type rxChunk struct {
	mem  [netio.CoalesceBufSize]byte
	refs atomic.Int32 // packets that still view mem
}

var chunkPool = sync.Pool{New: func() any { return new(rxChunk) }}

func getChunk() *rxChunk { return chunkPool.Get().(*rxChunk) }

// release drops one packet's view of c.
func (c *rxChunk) release() {
	if c.refs.Add(-1) == 0 {
		chunkPool.Put(c)
	}
}

// rxPacket is one received packet on its way from the receive goroutine to a worker. It owns buf,
// a pooled packet buffer, or a view of chunk; parsed views alias it.
type rxPacket struct {
	buf    []byte
	chunk  *rxChunk // nil when buf is a packet buffer of its own
	parsed packet.Parsed
	from   packet.Envelope
	qp     *QP
	more   bool // another packet for qp follows in the batch
}

// release gives the packet's buffer back.
func (p *rxPacket) release() {
	if p.chunk != nil {
		p.chunk.release()
	} else {
		putBuf(p.buf)
	}
	*p = rxPacket{}
}

// rxBatch carries the packets of one receive call that belong to one worker.
type rxBatch struct{ pkts []rxPacket }

var batchPool = sync.Pool{New: func() any { return &rxBatch{pkts: make([]rxPacket, 0, netio.IdealBatchSize)} }}

func getBatch() *rxBatch { return batchPool.Get().(*rxBatch) }

func putBatch(b *rxBatch) {
	b.pkts = b.pkts[:0]
	batchPool.Put(b)
}

// dropBatch returns the buffers of a batch nobody will handle, and the batch.
func dropBatch(b *rxBatch) {
	for i := range b.pkts {
		b.pkts[i].release()
	}
	putBatch(b)
}

// received returns the framing a datagram arrived with, as the transport sees it.
func received(m *netio.Message) packet.Envelope {
	return packet.Envelope{Src: m.Src, Dst: m.Dst, TrafficClass: m.TOS, HopLimit: m.TTL}
}

// outgoing returns the datagram that carries a packet the transport built.
func outgoing(p *transport.Packet) netio.Message {
	return netio.Message{Buf: p.Buf, Payload: p.Payload, Tail: p.Tail, Src: p.Env.Src, Dst: p.Env.Dst,
		TOS: p.Env.TrafficClass, TTL: p.Env.HopLimit}
}
