package netio

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// freeBatches returns the number of batches in the free list Conn.Send and contended receives
// share.
func freeBatches() int {
	batches.Lock()
	defer batches.Unlock()
	return len(batches.free)
}

// TestSenderSendsLikeSend: a UDPConn's Sender sends a mixed batch (runs the kernel segments, lone
// datagrams, other traffic classes) exactly as Send does, twice over one batch of its own, never
// touches the free list, and keeps no reference to the caller's buffers once Send returns.
func TestSenderSendsLikeSend(t *testing.T) {
	ids := newIDLog()
	conns := listenPair(t, UDPConfig{SetIPv4ID: ids.set}, []netip.Addr{lo1}, []netip.Addr{lo2})
	a, b := conns[0], conns[1]
	s := NewSender(a)
	require.IsType(t, &udpSender{}, s)
	us := s.(*udpSender)
	free := freeBatches()
	for round := range 2 {
		msgs, _ := mixedBatch(b.LocalAddrs()[0])
		n, err := s.Send(msgs)
		require.NoError(t, err)
		require.Equal(t, len(msgs), n)
		seqs, _ := receiveSeqs(t, b, len(msgs), 2048, IdealBatchSize)
		require.Equal(t, seqRange(len(msgs)), seqs, "round %d: datagrams in order, none lost", round)
		assert.Equal(t, [batchIovecs]unix.Iovec{}, us.b.iovs, "round %d: the batch holds on to caller buffers", round)
		assert.Zero(t, us.b.count, "round %d: entries left prepared", round)
	}
	assert.Equal(t, free, freeBatches(), "the Sender took batches from the free list or gave some back")
	c := a.Counters()
	assert.Equal(t, uint64(12), c.GSOSends, "six segmented sends a round")
	assert.Equal(t, uint64(2), c.SendCalls, "one sendmmsg a round")
}

// wrapped is a connection that wraps another by embedding the interface, as tests that drop or
// log datagrams do.
type wrapped struct {
	Conn
	sent int
}

func (w *wrapped) Send(msgs []Message) (int, error) {
	w.sent += len(msgs)
	return w.Conn.Send(msgs)
}

// TestNewSenderKeepsWrappers: a Sender on a wrapping connection is the wrapper itself, so its Send
// still sees every datagram; a fabric endpoint, which needs no scratch, is its own Sender; a Tap
// over a UDPConn shows its function every datagram and sends through a Sender of the UDPConn.
func TestNewSenderKeepsWrappers(t *testing.T) {
	conns := listenPair(t, UDPConfig{}, []netip.Addr{lo1}, []netip.Addr{lo2})
	w := &wrapped{Conn: conns[0]}
	s := NewSender(w)
	require.Same(t, w, s)
	n, err := s.Send([]Message{{Buf: []byte("x"), Dst: conns[1].LocalAddrs()[0]}})
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Equal(t, 1, w.sent)

	f := NewFabric(FabricConfig{})
	defer f.Close()
	e, err := f.NewEndpoint(DefaultPort, netip.MustParseAddr("10.0.0.1"))
	require.NoError(t, err)
	require.Same(t, e, NewSender(e))

	var seen []string
	ts := NewSender(Tap(conns[0], func(dir Direction, m *Message) { seen = append(seen, dir.String()+" "+string(m.Buf)) }))
	require.IsType(t, &tapSender{}, ts)
	require.IsType(t, &udpSender{}, ts.(*tapSender).inner)
	n, err = ts.Send([]Message{{Buf: []byte("y"), Dst: conns[1].LocalAddrs()[0]}})
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Equal(t, []string{"sent y"}, seen)
	seqs := make([]Message, 2)
	for i := range seqs {
		seqs[i].Buf = make([]byte, 16)
	}
	got := 0
	for got < 2 {
		n, err := conns[1].Receive(seqs[got:])
		require.NoError(t, err)
		got += n
	}
	assert.Equal(t, "x", string(seqs[0].Buf))
	assert.Equal(t, "y", string(seqs[1].Buf))
}

// TestSenderAllocs: a Sender's Send allocates nothing, segmented or not.
func TestSenderAllocs(t *testing.T) {
	for _, mode := range udpModes[:2] {
		conns := listenPair(t, mode.cfg, []netip.Addr{lo1}, []netip.Addr{lo2})
		dst := conns[1].LocalAddrs()[0]
		require.NoError(t, conns[1].Close())
		out := makeMsgs(IdealBatchSize, 80)
		for i := range out {
			out[i].Dst, out[i].Src = dst, netip.AddrPortFrom(lo1, 0xC001)
		}
		s := NewSender(conns[0])
		var failed error
		allocs := testing.AllocsPerRun(100, func() {
			if n, err := s.Send(out); n != len(out) || err != nil {
				failed = fmt.Errorf("Send = %d, %v", n, err)
			}
		})
		require.NoError(t, failed, mode.name)
		assert.Zero(t, allocs, "%s: allocations per Send", mode.name)
	}
}
