package stack

import (
	"log/slog"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/clock"
	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/netio"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

// countingConn counts the reads the stack makes of the connection it wraps.
type countingConn struct {
	netio.Conn
	receives atomic.Int32
	tries    atomic.Int32
}

func (c *countingConn) Receive(msgs []netio.Message) (int, error) {
	c.receives.Add(1)
	return c.Conn.Receive(msgs)
}

func (c *countingConn) TryReceive(msgs []netio.Message) (int, error) {
	c.tries.Add(1)
	return c.Conn.TryReceive(msgs)
}

// TestReceivePoll: after a read, the receive goroutine polls the network when the stack has a
// ReceivePoll (or BusyPoll) and goes straight back to waiting when it has neither.
func TestReceivePoll(t *testing.T) {
	for _, tc := range []struct {
		name        string
		busy, rx    time.Duration
		wantPolling bool
	}{
		{"neither", 0, 0, false},
		{"ReceivePoll", 0, time.Hour, true},
		{"BusyPoll", time.Hour, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clock.NewFake(time.Unix(1_700_000_000, 0))
			fab := netio.NewFabric(netio.FabricConfig{Clock: clk})
			defer fab.Close()
			ep, err := fab.NewEndpoint(packet.UDPPort, mustAddr("10.0.0.1"))
			require.NoError(t, err)
			conn := &countingConn{Conn: ep}
			rt := New(Config{Conn: conn, Workers: 1, Clock: clk, Log: slog.New(slog.DiscardHandler), Strict: true,
				BusyPoll: tc.busy, ReceivePoll: tc.rx})
			defer func() { assert.NoError(t, rt.Close()) }()

			peer, err := fab.NewEndpoint(packet.UDPPort, mustAddr("10.0.0.2"))
			require.NoError(t, err)
			defer peer.Close()
			// Any datagram will do: the stack drops this one as malformed after reading it.
			_, err = peer.Send([]netio.Message{{Buf: []byte{1, 2, 3}, Dst: netip.AddrPortFrom(mustAddr("10.0.0.1"), packet.UDPPort)}})
			require.NoError(t, err)

			if tc.wantPolling {
				require.Eventually(t, func() bool { return conn.tries.Load() > 0 }, 10*time.Second, time.Millisecond)
				return
			}
			// The second Receive is the wait after the datagram; nothing polled in between.
			require.Eventually(t, func() bool { return conn.receives.Load() >= 2 }, 10*time.Second, time.Millisecond)
			assert.Zero(t, conn.tries.Load())
		})
	}
}

// runScratch is a reader's scratch in chunk mode, as on a connection that delivers coalesced
// runs, with one message.
func runScratch(rt *Stack) *rxScratch {
	return &rxScratch{msgs: make([]netio.Message, 1), chunks: []*rxChunk{getChunk()}, batches: make([]*rxBatch, len(rt.workers))}
}

// fillRun writes pkts back to back into the scratch's chunk and makes its message the coalesced
// run of them, as netio delivers one (all but the last the same size).
func fillRun(x *rxScratch, src, dst netip.AddrPort, pkts ...[]byte) {
	mem := x.chunks[0].mem[:0]
	for _, p := range pkts {
		mem = append(mem, p...)
	}
	seg := 0
	if len(pkts) > 1 {
		seg = len(pkts[0])
	}
	x.msgs[0] = netio.Message{Buf: mem, Src: src, Dst: dst, SegmentSize: uint16(seg)}
}

// inChunk reports whether b lies in c's memory.
func inChunk(b []byte, c *rxChunk) bool {
	p, lo := uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(unsafe.Pointer(&c.mem[0]))
	return p >= lo && p+uintptr(len(b)) <= lo+uintptr(len(c.mem))
}

// TestTakeCoalescedRun: the packets of a run go to their workers as views of the run's chunk,
// which the reader replaces and the last packet handled gives back; a bad packet in the run is
// dropped and counted alone; a lone datagram is copied out and its chunk read into again.
func TestTakeCoalescedRun(t *testing.T) {
	x := newRig(t, "10.0.0.1")
	qa, ea := x.create(t, qp.TypeRC)
	qb, eb := x.create(t, qp.TypeRC)
	src := netip.AddrPortFrom(mustAddr("10.0.0.2"), 0xC000)
	dst := netip.AddrPortFrom(mustAddr("10.0.0.1"), packet.UDPPort)
	sc := runScratch(x.rt)
	c := sc.chunks[0]
	fillRun(sc, src, dst, signed(t, qa.qpn, src, dst, false), signed(t, qb.qpn, src, dst, false),
		signed(t, qa.qpn, src, dst, true), signed(t, qa.qpn, src, dst, false))
	before := x.rt.Counters()

	require.GreaterOrEqual(t, x.rt.take(sc, 0), 0)
	assert.Equal(t, uint64(1), x.rt.Counters().Get(counter.RcvdICRCErr)-before.Get(counter.RcvdICRCErr))
	assert.NotSame(t, c, sc.chunks[0], "the chunk the packets view is no longer read into")
	assert.Equal(t, int32(3), c.refs.Load())
	for _, b := range sc.batches {
		if b == nil {
			continue
		}
		for _, p := range b.pkts {
			assert.Same(t, c, p.chunk)
			assert.True(t, inChunk(p.buf, c), "packet is a view of the chunk")
		}
	}
	x.handle(sc.batches)
	assert.Zero(t, c.refs.Load(), "every view given back")
	for _, e := range []*fakeEngine{ea, eb} {
		e.mu.Lock()
		assert.Len(t, e.received, map[*fakeEngine]int{ea: 2, eb: 1}[e])
		e.mu.Unlock()
	}

	lone := sc.chunks[0]
	fillRun(sc, src, dst, signed(t, qa.qpn, src, dst, false))
	w := x.rt.take(sc, 0)
	require.GreaterOrEqual(t, w, 0)
	assert.Same(t, lone, sc.chunks[0], "a lone datagram leaves its chunk to the reader")
	p := sc.batches[w].pkts[0]
	assert.Nil(t, p.chunk)
	assert.False(t, inChunk(p.buf, lone))
	dropBatch(sc.batches[w])
}

// TestTakeRunAllocations: cutting a coalesced run into packets allocates nothing.
func TestTakeRunAllocations(t *testing.T) {
	x := newRig(t, "10.0.0.1")
	q, _ := x.create(t, qp.TypeRC)
	src := netip.AddrPortFrom(mustAddr("10.0.0.2"), 0xC000)
	dst := netip.AddrPortFrom(mustAddr("10.0.0.1"), packet.UDPPort)
	pkt := signed(t, q.qpn, src, dst, false)
	sc := runScratch(x.rt)
	allocs := testing.AllocsPerRun(1000, func() {
		fillRun(sc, src, dst, pkt, pkt, pkt, pkt)
		x.rt.take(sc, 0)
		for i, b := range sc.batches {
			if b != nil {
				dropBatch(b)
				sc.batches[i] = nil
			}
		}
	})
	assert.Zero(t, allocs, "allocations per run of four packets")
}

// TestPollLeavesUnorderedConnAlone: a Conn that cannot wait for datagrams (netio.Waiter finds
// none) is read by the receive goroutine alone, outside the poll lock; a Poll reading it too
// could hand the workers batches out of order.
func TestPollLeavesUnorderedConnAlone(t *testing.T) {
	x := newRigOn(t, func(e *netio.Endpoint) netio.Conn { return &countingConn{Conn: e} }, "10.0.0.1")
	conn := x.rt.conn.(*countingConn)
	for range 3 {
		x.rt.Poll()
	}
	assert.Zero(t, conn.tries.Load())
}

// waitingConn is a countingConn that can wait for datagrams, as the UDP backend can, so that the
// receive goroutine reads it in order (receiveOrdered); waits counts the waits.
type waitingConn struct {
	countingConn
	ep    *netio.Endpoint
	waits atomic.Int32
}

func (c *waitingConn) WaitReadable() error {
	c.waits.Add(1)
	return c.ep.WaitReadable()
}

// TestReceiveOrderedThroughWrappers: under a Tap and a FaultConn (a tool's --pcap and
// GORXE_FAULTS), the receive goroutine still waits on the Conn underneath and reads under the
// poll lock with TryReceive, never with a blocking Receive that a Poll could overtake.
func TestReceiveOrderedThroughWrappers(t *testing.T) {
	var inner *waitingConn
	x := newRigOn(t, func(e *netio.Endpoint) netio.Conn {
		inner = &waitingConn{countingConn: countingConn{Conn: e}, ep: e}
		faulty, err := netio.WithFaults(inner, netio.FaultConfig{}, nil)
		require.NoError(t, err)
		return netio.Tap(faulty, func(netio.Direction, *netio.Message) {})
	}, "10.0.0.1")
	peer, err := x.fab.NewEndpoint(packet.UDPPort, mustAddr("10.0.0.2"))
	require.NoError(t, err)
	defer peer.Close()
	// Any datagram will do: the stack drops this one as malformed after reading it.
	_, err = peer.Send([]netio.Message{{Buf: []byte{1, 2, 3}, Dst: netip.AddrPortFrom(mustAddr("10.0.0.1"), packet.UDPPort)}})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return inner.ep.Queued() == 0 }, 10*time.Second, time.Millisecond)
	assert.NotZero(t, inner.tries.Load())
	assert.Zero(t, inner.receives.Load())
}

// TestWaitBeforeReading: a stack that does not poll waits for the UDP socket before it reads,
// so a datagram costs no read that finds the socket empty before the wait (one system call of
// two per wake-up).
func TestWaitBeforeReading(t *testing.T) {
	conn, err := netio.ListenUDP(netio.UDPConfig{Addrs: []netip.Addr{mustAddr("127.0.0.1")}})
	require.NoError(t, err)
	rt := New(Config{Conn: conn, Workers: 1, Clock: clock.Real{}, Log: slog.New(slog.DiscardHandler), Strict: true})
	defer func() { assert.NoError(t, rt.Close()) }()
	peer, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer peer.Close()

	const n = 8
	to := net.UDPAddrFromAddrPort(conn.LocalAddrs()[0])
	for i := range n {
		// Any datagram will do: the stack drops it as malformed after reading it.
		_, err := peer.WriteToUDP([]byte{1, 2, 3}, to)
		require.NoError(t, err)
		require.Eventually(t, func() bool { return conn.Counters().ReceivedDatagrams == uint64(i+1) },
			10*time.Second, time.Millisecond)
	}
	assert.LessOrEqual(t, conn.Counters().EmptyReceives, uint64(n/4), "an empty read before each wait")
}

// TestReceivePollSpacesLooks: outside latency mode the receive goroutine's looks at an empty
// socket are pollGap apart, growing to maxReceivePollGap, so a poll of d makes at most
// d/maxReceivePollGap + 3 of them (the first three gaps are shorter) before the receive goroutine
// waits, on either path (a connection that can wait for datagrams, read in order, and one that
// cannot).
func TestReceivePollSpacesLooks(t *testing.T) {
	assert.Equal(t, []time.Duration{2 * time.Microsecond, 4 * time.Microsecond, 8 * time.Microsecond, 8 * time.Microsecond},
		[]time.Duration{pollGap(0), pollGap(1), pollGap(2), pollGap(3)})
	const poll = 4 * time.Millisecond
	for _, ordered := range []bool{false, true} {
		t.Run(map[bool]string{false: "spin", true: "ordered"}[ordered], func(t *testing.T) {
			fab := netio.NewFabric(netio.FabricConfig{})
			defer fab.Close()
			ep, err := fab.NewEndpoint(packet.UDPPort, mustAddr("10.0.0.1"))
			require.NoError(t, err)
			var conn netio.Conn
			var tries, waited func() int32
			if ordered {
				c := &waitingConn{countingConn: countingConn{Conn: ep}, ep: ep}
				conn, tries, waited = c, c.tries.Load, c.waits.Load
			} else {
				c := &countingConn{Conn: ep}
				conn, tries, waited = c, c.tries.Load, c.receives.Load
			}
			// The receive goroutine starts by polling the empty socket, then waits.
			rt := New(Config{Conn: conn, Workers: 1, Log: slog.New(slog.DiscardHandler), ReceivePoll: poll})
			defer func() { assert.NoError(t, rt.Close()) }()

			require.Eventually(t, func() bool { return waited() > 0 }, 10*time.Second, time.Millisecond)
			looks := tries()
			assert.Positive(t, looks)
			assert.LessOrEqual(t, looks, int32(poll/maxReceivePollGap)+3, "looks at the empty socket")
		})
	}
}
