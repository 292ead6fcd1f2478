package netio

import (
	"bytes"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// inPieces returns m with its datagram split into Buf, Payload and Tail, each in memory of its
// own, as a sender whose payload stays in registered memory gives it.
func inPieces(m Message) Message {
	d := m.Buf
	head, tail := min(8, len(d)), min(4, len(d)-min(8, len(d)))
	m.Buf = bytes.Clone(d[:head])
	m.Payload = bytes.Clone(d[head : len(d)-tail])
	m.Tail = bytes.Clone(d[len(d)-tail:])
	return m
}

// TestVectoredDatagrams sends datagrams in pieces, every other one, through segmented sends and
// single ones: each arrives whole, the runs are those the datagrams' lengths make, and the IPv4
// IDs are announced as for whole datagrams.
func TestVectoredDatagrams(t *testing.T) {
	ids := newIDLog()
	t.Cleanup(func() { assert.Empty(t, ids.bad, "SetIPv4ID told a wrong previous ID") })
	conns := listenPair(t, UDPConfig{SetIPv4ID: ids.set}, []netip.Addr{lo1}, []netip.Addr{lo2})
	a, b := conns[0], conns[1]
	var vs VectorSender = a
	require.True(t, vs.SendsVectors())
	msgs, sizes := mixedBatch(b.LocalAddrs()[0])
	for i := range msgs {
		if i%2 == 1 {
			msgs[i] = inPieces(msgs[i])
			require.NotEmpty(t, msgs[i].Payload)
		}
	}
	n, err := a.Send(msgs)
	require.NoError(t, err)
	require.Equal(t, len(msgs), n)

	seqs, segs := receiveSeqs(t, b, len(msgs), 2048, IdealBatchSize)
	require.Equal(t, seqRange(len(msgs)), seqs, "datagrams in order, whole, none lost")
	assert.Equal(t, uint16(1040), segs[1], "a datagram in pieces joins a segmented send")
	assert.Equal(t, uint16(2), ids.lastID(2))
	assert.Equal(t, uint64(6), a.Counters().GSOSends, "the same runs as whole datagrams make")
	total := 0
	for _, n := range sizes {
		total += n
	}
	assert.Equal(t, uint64(total), b.Counters().ReceivedBytes, "every datagram arrived whole")
}

// TestVectoredGSOFallback is TestGSOFallbackLosesNothing with the runs' first datagrams in
// pieces: a refused segmented send is stripped back to its first datagram, all of its pieces.
func TestVectoredGSOFallback(t *testing.T) {
	ids := newIDLog()
	conns := listenPair(t, UDPConfig{SetIPv4ID: ids.set}, []netip.Addr{lo1}, []netip.Addr{lo2})
	a, b := conns[0], conns[1]
	var serr error
	require.NoError(t, a.listeners[0].rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_NO_CHECK, 1)
	}))
	require.NoError(t, serr)
	msgs := make([]Message, 40)
	for i := range msgs {
		msgs[i] = inPieces(Message{Buf: datagram(i, 1040), Dst: b.LocalAddrs()[0]})
	}
	n, err := a.Send(msgs)
	require.NoError(t, err)
	require.Equal(t, len(msgs), n)
	seqs, _ := receiveSeqs(t, b, len(msgs), 2048, IdealBatchSize)
	require.Equal(t, seqRange(len(msgs)), seqs)
	assert.Equal(t, uint64(1), a.Counters().GSOFallbacks)
	assert.Equal(t, uint64(len(msgs)*1040), b.Counters().ReceivedBytes, "every datagram arrived whole")
	assert.Empty(t, ids.bad)
}
