package stack

import (
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/netio"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
	"github.com/gorxe/gorxe/transport"
)

// senderConn is a fabric endpoint that hands out Senders (netio.NewSender) and counts what goes
// through each of them and through its own Send.
type senderConn struct {
	*netio.Endpoint
	mu      sync.Mutex
	senders []*countingSender
	plain   atomic.Int64 // datagrams sent through Conn.Send
}

func (c *senderConn) Send(msgs []netio.Message) (int, error) {
	c.plain.Add(int64(len(msgs)))
	return c.Endpoint.Send(msgs)
}

func (c *senderConn) NewSender() netio.Sender {
	s := &countingSender{inner: c.Endpoint}
	c.mu.Lock()
	c.senders = append(c.senders, s)
	c.mu.Unlock()
	return s
}

type countingSender struct {
	inner netio.Sender
	sent  atomic.Int64
}

func (s *countingSender) Send(msgs []netio.Message) (int, error) {
	s.sent.Add(int64(len(msgs)))
	return s.inner.Send(msgs)
}

// TestWorkersSendThroughTheirOwnSender: each worker takes a Sender of its own from the connection
// when the stack starts, and what a QP's engine produces leaves through its worker's Sender, not
// through the connection's shared Send.
func TestWorkersSendThroughTheirOwnSender(t *testing.T) {
	var conn *senderConn
	x := newRigOn(t, func(e *netio.Endpoint) netio.Conn { conn = &senderConn{Endpoint: e}; return conn }, "10.0.0.1")
	conn.mu.Lock()
	senders := append([]*countingSender(nil), conn.senders...)
	conn.mu.Unlock()
	require.Len(t, senders, len(x.rt.workers), "one Sender per worker")
	assert.NotSame(t, senders[0], senders[1])

	q, e := x.create(t, qp.TypeUD)
	peer := newRawPeer(t, x, "10.0.0.2")
	e.mu.Lock()
	e.onRun = func(now time.Time, out *transport.Output) {
		h := &packet.Headers{BTH: packet.BTHFields{Opcode: packet.UDSendOnly, PKey: 0xFFFF, DestQP: 77},
			DETH: packet.DETHFields{QKey: 1, SrcQP: q.qpn}}
		pkt, _ := packet.AppendPacket(out.Alloc()[:0], h, []byte("out"))
		out.Packets = append(out.Packets, transport.Packet{Buf: pkt, Env: packet.Envelope{
			Src: netip.AddrPortFrom(mustAddr("10.0.0.1"), 0xC001), Dst: netip.AddrPortFrom(mustAddr("10.0.0.2"), packet.UDPPort)}})
	}
	e.mu.Unlock()
	require.NoError(t, q.PostSend(nil))
	waitRan(t, e)
	msgs := []netio.Message{{Buf: make([]byte, 256)}}
	n, err := peer.ep.Receive(msgs)
	require.NoError(t, err)
	require.Equal(t, 1, n)

	assert.Equal(t, int64(1), senders[q.w.idx].sent.Load(), "the QP's worker's Sender")
	assert.Equal(t, int64(0), senders[1-q.w.idx].sent.Load(), "the other worker's Sender")
	assert.Equal(t, int64(0), conn.plain.Load(), "the connection's Send")
}
