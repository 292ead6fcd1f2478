package netio

import (
	"net"
	"net/netip"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// idLog records the IPv4 IDs Send announces, per datagram sequence number.
type idLog struct {
	mu  sync.Mutex
	ids map[int][]uint16
	bad []int // datagrams announced with a "from" ID other than the one they had
}

func newIDLog() *idLog { return &idLog{ids: map[int][]uint16{}} }

func (l *idLog) set(m *Message, from, id uint16) {
	l.mu.Lock()
	defer l.mu.Unlock()
	seq := seqOf(m.Buf)
	prev := uint16(0)
	if ids := l.ids[seq]; len(ids) > 0 {
		prev = ids[len(ids)-1]
	}
	if from != prev {
		l.bad = append(l.bad, seq)
	}
	l.ids[seq] = append(l.ids[seq], id)
}

// lastID is the ID datagram seq leaves with: the last one announced, or 0.
func (l *idLog) lastID(seq int) uint16 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ids := l.ids[seq]; len(ids) > 0 {
		return ids[len(ids)-1]
	}
	return 0
}

// datagram builds datagram seq of size bytes (at least 4) in a fresh buffer.
func datagram(seq, size int) []byte {
	b := make([]byte, size)
	b[0], b[1], b[2], b[3] = byte(seq>>24), byte(seq>>16), byte(seq>>8), byte(seq)
	for k := 4; k < size; k++ {
		b[k] = byte(seq + k)
	}
	return b
}

// receiveSeqs reads until want datagrams arrived at c and checks each against the datagram
// builder, returning the sequence numbers in arrival order and the messages' SegmentSize.
func receiveSeqs(t *testing.T, c *UDPConn, want, bufSize, batch int) (seqs []int, segs []uint16) {
	t.Helper()
	in := makeMsgs(batch, bufSize)
	for len(seqs) < want {
		resetBufs(in)
		n, err := c.Receive(in)
		require.NoError(t, err)
		for _, m := range in[:n] {
			seq := seqOf(m.Buf)
			require.Equal(t, datagram(seq, len(m.Buf)), m.Buf, "datagram %d", seq)
			seqs = append(seqs, seq)
			segs = append(segs, m.SegmentSize)
		}
	}
	return seqs, segs
}

func seqRange(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// mixedBatch is a Send batch whose runs exercise every rule that ends one.
func mixedBatch(dst netip.AddrPort) (msgs []Message, sizes []int) {
	sizes = []int{
		1040, 1040, 1040, 500, // a run ended by a shorter datagram
		1040, 1040, // a new run of two
		1040,           // differs in TOS below: alone
		80, 80, 80, 90, // a longer datagram cannot join
		90,
	}
	for i := 0; i < 70; i++ { // more than the 64 a run may hold
		sizes = append(sizes, 100)
	}
	for i, size := range sizes {
		m := Message{Buf: datagram(i, size), Dst: dst}
		if i == 6 {
			m.TOS = 0x20
		}
		msgs = append(msgs, m)
	}
	return msgs, sizes
}

func TestGSORunsAndIPv4IDs(t *testing.T) {
	ids := newIDLog()
	t.Cleanup(func() { assert.Empty(t, ids.bad, "SetIPv4ID told a wrong previous ID") })
	conns := listenPair(t, UDPConfig{SetIPv4ID: ids.set}, []netip.Addr{lo1}, []netip.Addr{lo2})
	a, b := conns[0], conns[1]
	msgs, sizes := mixedBatch(b.LocalAddrs()[0])
	n, err := a.Send(msgs)
	require.NoError(t, err)
	require.Equal(t, len(msgs), n)

	seqs, segs := receiveSeqs(t, b, len(msgs), 2048, IdealBatchSize)
	require.Equal(t, seqRange(len(msgs)), seqs, "datagrams in order, none lost")

	// Run starts and the segment size each run reports on receive (0: a lone datagram).
	runs := []struct {
		first, len int
		seg        uint16
	}{{0, 4, 1040}, {4, 2, 1040}, {6, 1, 0}, {7, 3, 80}, {10, 2, 90}, {12, 64, 100}, {76, 6, 100}}
	for _, r := range runs {
		for k := 0; k < r.len; k++ {
			i := r.first + k
			assert.Equal(t, uint16(k), ids.lastID(i), "IPv4 ID of datagram %d (size %d)", i, sizes[i])
			assert.Equal(t, r.seg, segs[i], "received segment size of datagram %d", i)
		}
	}
	ca, cb := a.Counters(), b.Counters()
	assert.Equal(t, uint64(6), ca.GSOSends)
	assert.Equal(t, uint64(len(msgs)-1), ca.GSOSegments)
	assert.Equal(t, uint64(len(msgs)), ca.SentDatagrams)
	assert.Equal(t, uint64(6), cb.GROReads)
	assert.Equal(t, uint64(len(msgs)-1), cb.GROSegments)
	assert.Equal(t, uint64(len(msgs)), cb.ReceivedDatagrams)
	assert.Zero(t, ca.GSOFallbacks+cb.GROFallbacks)
}

func TestGSOIPv4NeedsIDHook(t *testing.T) {
	conns := listenPair(t, UDPConfig{}, []netip.Addr{lo1}, []netip.Addr{lo2})
	a, b := conns[0], conns[1]
	msgs, _ := mixedBatch(b.LocalAddrs()[0])
	_, err := a.Send(msgs)
	require.NoError(t, err)
	seqs, _ := receiveSeqs(t, b, len(msgs), 2048, IdealBatchSize)
	require.Equal(t, seqRange(len(msgs)), seqs)
	assert.Zero(t, a.Counters().GSOSends, "IPv4 must not be segmented without SetIPv4ID")
}

func TestGSOIPv6(t *testing.T) {
	needIPv6(t)
	// No SetIPv4ID: IPv6 has no Identification to announce.
	a := listenPair(t, UDPConfig{}, []netip.Addr{lo6})[0]
	msgs, _ := mixedBatch(a.LocalAddrs()[0])
	for i := range msgs {
		msgs[i].Src = netip.AddrPortFrom(lo6, 0xC0DE)
	}
	_, err := a.Send(msgs)
	require.NoError(t, err)
	seqs, _ := receiveSeqs(t, a, len(msgs), 2048, IdealBatchSize)
	require.Equal(t, seqRange(len(msgs)), seqs)
	assert.Equal(t, uint64(6), a.Counters().GSOSends)
	assert.Equal(t, uint64(6), a.Counters().GROReads)
}

// A socket that sends zero UDP checksums makes Linux refuse every segmented send (EINVAL): a
// real refusal, which must turn GSO off for that socket and lose nothing.
func TestGSOFallbackLosesNothing(t *testing.T) {
	ids := newIDLog()
	t.Cleanup(func() { assert.Empty(t, ids.bad, "SetIPv4ID told a wrong previous ID") })
	conns := listenPair(t, UDPConfig{SetIPv4ID: ids.set}, []netip.Addr{lo1}, []netip.Addr{lo2})
	a, b := conns[0], conns[1]
	dst := b.LocalAddrs()[0]
	var serr error
	require.NoError(t, a.listeners[0].rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_NO_CHECK, 1)
	}))
	require.NoError(t, serr)

	const total = 200
	for first := 0; first < total; first += 50 {
		msgs := make([]Message, 50)
		for i := range msgs {
			msgs[i] = Message{Buf: datagram(first+i, 1040), Dst: dst}
		}
		// A different source port in the middle keeps a socket that can still segment.
		msgs[25].Src = netip.AddrPortFrom(lo1, 0xC001)
		msgs[26].Src = netip.AddrPortFrom(lo1, 0xC001)
		n, err := a.Send(msgs)
		require.NoError(t, err)
		require.Equal(t, len(msgs), n)
	}
	seqs, _ := receiveSeqs(t, b, total, 2048, IdealBatchSize)
	require.Equal(t, seqRange(total), seqs)

	ca := a.Counters()
	assert.Equal(t, uint64(1), ca.GSOFallbacks, "one socket fell back")
	assert.Equal(t, uint64(total), ca.SentDatagrams)
	assert.Equal(t, uint64(4), ca.GSOSends, "the 0xC001 socket still segments")
	assert.Zero(t, ca.Drops[DropSendError])
	assert.False(t, a.listeners[0].gso.Load())
	for i := 0; i < total; i++ {
		if i%50 == 26 {
			assert.Equal(t, uint16(1), ids.lastID(i), "datagram %d left segmented", i)
			continue
		}
		assert.Zero(t, ids.lastID(i), "datagram %d left alone, so with ID 0", i)
	}
	assert.Equal(t, []uint16{1, 0}, ids.ids[1], "the refused run was renumbered")
}

// With GRO off at the receiver, the kernel cuts segmented sends up on delivery.
func TestGSOToReceiverWithoutGRO(t *testing.T) {
	conns := listenPair(t, UDPConfig{SetIPv4ID: func(*Message, uint16, uint16) {}}, []netip.Addr{lo1})
	plain := listenPair(t, UDPConfig{DisableGRO: true, DisableGSO: true}, []netip.Addr{lo2})
	a, b := conns[0], plain[0]
	msgs, _ := mixedBatch(b.LocalAddrs()[0])
	_, err := a.Send(msgs)
	require.NoError(t, err)
	seqs, segs := receiveSeqs(t, b, len(msgs), 2048, IdealBatchSize)
	require.Equal(t, seqRange(len(msgs)), seqs)
	assert.Equal(t, make([]uint16, len(msgs)), segs)
	assert.Equal(t, uint64(6), a.Counters().GSOSends)
	assert.Zero(t, b.Counters().GROReads)
	assert.Nil(t, b.listeners[0].gror)
}

// A coalesced read larger than the caller's batch is handed out over several Receives, in order;
// a datagram too large for its buffer is dropped and counted without taking a message.
// Messages offered CoalesceBufSize bytes receive each coalesced run whole, and Datagrams and
// Datagram cut it into the datagrams that were sent; a smaller buffer beside them still gets one
// datagram.
func TestGROWholeRuns(t *testing.T) {
	conns := listenPair(t, UDPConfig{SetIPv4ID: func(*Message, uint16, uint16) {}}, []netip.Addr{lo1}, []netip.Addr{lo2})
	a, b := conns[0], conns[1]
	require.Equal(t, CoalesceBufSize, b.ReceiveBufSize())
	msgs, sizes := mixedBatch(b.LocalAddrs()[0])
	_, err := a.Send(msgs)
	require.NoError(t, err)

	in := makeMsgs(IdealBatchSize, CoalesceBufSize)
	var seqs, runLens []int
	var segs []uint16
	for len(seqs) < len(msgs) {
		resetBufs(in)
		n, err := b.Receive(in)
		require.NoError(t, err)
		for _, m := range in[:n] {
			runLens = append(runLens, m.Datagrams())
			segs = append(segs, m.SegmentSize)
			for i := range m.Datagrams() {
				dg := m.Datagram(i)
				seq := seqOf(dg)
				require.Equal(t, datagram(seq, sizes[seq]), dg, "datagram %d", seq)
				seqs = append(seqs, seq)
			}
		}
	}
	assert.Equal(t, seqRange(len(msgs)), seqs, "datagrams in order, none lost")
	assert.Equal(t, []int{4, 2, 1, 3, 2, 64, 6}, runLens, "datagrams per message")
	assert.Equal(t, []uint16{1040, 1040, 0, 80, 90, 100, 100}, segs)
	cb := b.Counters()
	assert.Equal(t, uint64(len(msgs)), cb.ReceivedDatagrams)
	assert.Equal(t, uint64(6), cb.GROReads)

	// One small buffer first: it takes one datagram, and the rest of its run waits for the next
	// Receive whatever that one offers.
	_, err = a.Send(msgs[:4])
	require.NoError(t, err)
	mixed := append(makeMsgs(1, 2048), makeMsgs(3, CoalesceBufSize)...)
	var got []int
	for len(got) < 4 {
		resetBufs(mixed)
		n, err := b.Receive(mixed)
		require.NoError(t, err)
		for _, m := range mixed[:n] {
			require.Equal(t, 1, m.Datagrams())
			got = append(got, seqOf(m.Buf))
		}
	}
	assert.Equal(t, seqRange(4), got)
}

// Tap and fault observers see each datagram of a run received whole on its own.
func TestTapSplitsWholeRuns(t *testing.T) {
	conns := listenPair(t, UDPConfig{SetIPv4ID: func(*Message, uint16, uint16) {}}, []netip.Addr{lo1}, []netip.Addr{lo2})
	a := conns[0]
	var seen []int
	b := Tap(conns[1], func(d Direction, m *Message) {
		if d == Received {
			require.Equal(t, 1, m.Datagrams())
			seen = append(seen, seqOf(m.Buf))
		}
	})
	var msgs []Message
	for i := range 10 {
		msgs = append(msgs, Message{Buf: datagram(i, 300), Dst: b.LocalAddrs()[0]})
	}
	_, err := a.Send(msgs)
	require.NoError(t, err)
	in := makeMsgs(4, CoalesceBufSize)
	for received := 0; received < len(msgs); {
		resetBufs(in)
		n, err := b.Receive(in)
		require.NoError(t, err)
		for _, m := range in[:n] {
			received += m.Datagrams()
		}
	}
	assert.Equal(t, seqRange(10), seen)
}

func TestGROHandsOutAcrossReceives(t *testing.T) {
	conns := listenPair(t, UDPConfig{SetIPv4ID: func(*Message, uint16, uint16) {}}, []netip.Addr{lo1}, []netip.Addr{lo2})
	a, b := conns[0], conns[1]
	dst := b.LocalAddrs()[0]
	var msgs []Message
	for i := 0; i < 64; i++ {
		msgs = append(msgs, Message{Buf: datagram(i, 300), Dst: dst})
	}
	for i := 64; i < 70; i++ {
		msgs = append(msgs, Message{Buf: datagram(i, 100), Dst: dst})
	}
	_, err := a.Send(msgs)
	require.NoError(t, err)

	in := makeMsgs(5, 200) // too small for the first 64
	n, err := b.Receive(in)
	require.NoError(t, err)
	for n == 0 {
		resetBufs(in)
		n, err = b.Receive(in)
		require.NoError(t, err)
	}
	var seqs []int
	for _, m := range in[:n] {
		seqs = append(seqs, seqOf(m.Buf))
	}
	seqs2, _ := receiveSeqs(t, b, 6-n, 200, 5)
	assert.Equal(t, seqRange(6), sub(append(seqs, seqs2...), 64))
	assert.Equal(t, uint64(64), b.Counters().Drops[DropTruncated])
}

func sub(s []int, d int) []int {
	for i := range s {
		s[i] -= d
	}
	return s
}

// Both paths move batches without a heap allocation per datagram (or per batch).
func TestUDPBatchAllocs(t *testing.T) {
	for _, mode := range udpModes {
		t.Run(mode.name, func(t *testing.T) {
			conns := listenPair(t, mode.cfg, []netip.Addr{lo1}, []netip.Addr{lo2})
			a, b := conns[0], conns[1]
			out := makeMsgs(IdealBatchSize, 1040)
			for i := range out {
				out[i].Dst = b.LocalAddrs()[0]
				out[i].Src = netip.AddrPortFrom(lo1, 0xC000+uint16(i/32))
			}
			in := makeMsgs(16, 2048)
			round := func() {
				_, err := a.Send(out)
				require.NoError(t, err)
				for got := 0; got < len(out); {
					resetBufs(in)
					n, err := b.Receive(in)
					require.NoError(t, err)
					got += n
				}
			}
			round()
			assert.Zero(t, testing.AllocsPerRun(50, round), "allocations per round of 64 datagrams")
			// round ran once, then once more as AllocsPerRun's warm-up and 50 times: two runs each.
			if mode.cfg.DisableGSO {
				assert.Zero(t, a.Counters().GSOSends)
				assert.Zero(t, b.Counters().GROReads)
			} else {
				assert.Equal(t, uint64(2*52), a.Counters().GSOSends)
				assert.Equal(t, uint64(2*52), b.Counters().GROReads)
			}
		})
	}
}

// A run the kernel refuses with EINVAL for a reason of its own (a loopback source may not reach
// an outside address) comes back unsent, with its datagrams renumbered to the ID 0 they would
// leave with alone, and the socket keeps segmenting.
func TestGSORefusedRunRenumbered(t *testing.T) {
	ids := newIDLog()
	t.Cleanup(func() { assert.Empty(t, ids.bad, "SetIPv4ID told a wrong previous ID") })
	a := listenPair(t, UDPConfig{SetIPv4ID: ids.set}, []netip.Addr{lo1})[0]
	outside := netip.MustParseAddrPort("192.0.2.77:4791")
	msgs := []Message{
		{Buf: datagram(0, 100), Dst: outside},
		{Buf: datagram(1, 100), Dst: outside},
		{Buf: datagram(2, 100), Dst: outside},
	}
	n, err := a.Send(msgs)
	require.ErrorIs(t, err, unix.EINVAL)
	assert.Zero(t, n)
	assert.Equal(t, []uint16{1, 0}, ids.ids[1])
	assert.Equal(t, []uint16{2, 0}, ids.ids[2])
	assert.True(t, a.listeners[0].gso.Load(), "an error of the datagrams' own is no reason to stop segmenting")
	assert.Equal(t, uint64(1), a.Counters().Drops[DropSendError])
}

// groSegment reads what the kernel wrote; a malformed control area yields 0 (one datagram), never
// a panic or a read past the slot's buffer.
func TestGROSegmentParsing(t *testing.T) {
	b := newReceiveBatch()
	put := func(off int, level, typ int32, length int, val int32) {
		buf := unsafe.Slice((*byte)(unsafe.Pointer(&b.oob[0][0])), cmsgWords*8)
		c := (*unix.Cmsghdr)(unsafe.Pointer(&buf[off]))
		c.Level, c.Type = level, typ
		c.SetLen(length)
		if off+unix.CmsgLen(4) <= len(buf) {
			*(*int32)(unsafe.Pointer(&buf[off+unix.CmsgLen(0)])) = val
		}
	}
	h := &b.hdrs[0].Hdr
	cases := []struct {
		name       string
		setup      func()
		controllen int
		want       int
	}{
		{"none", func() {}, 0, 0},
		{"gro", func() { put(0, unix.SOL_UDP, unix.UDP_GRO, unix.CmsgLen(4), 1040) }, unix.CmsgSpace(4), 1040},
		{"after another", func() {
			put(0, unix.SOL_SOCKET, unix.SO_RXQ_OVFL, unix.CmsgLen(4), 7)
			put(unix.CmsgSpace(4), unix.SOL_UDP, unix.UDP_GRO, unix.CmsgLen(4), 80)
		}, 2 * unix.CmsgSpace(4), 80},
		{"length past the area", func() { put(0, unix.SOL_UDP, unix.UDP_GRO, 1000, 80) }, unix.CmsgSpace(4), 0},
		{"length below a header", func() { put(0, unix.SOL_UDP, unix.UDP_GRO, 3, 80) }, unix.CmsgSpace(4), 0},
		{"too short for the value", func() { put(0, unix.SOL_UDP, unix.UDP_GRO, unix.CmsgLen(2), 80) }, unix.CmsgSpace(4), 0},
		{"controllen past the buffer", func() { put(0, unix.SOL_SOCKET, 1, unix.CmsgLen(4), 0) }, 1 << 20, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b.oob[0] = [cmsgWords]uint64{}
			tc.setup()
			h.SetControllen(tc.controllen)
			assert.Equal(t, tc.want, b.groSegment(0))
		})
	}
}

// Close marks the conn closed before it closes the sockets, so a waiting read that starts in
// between finds the conn closed before its GRO reader exists. It must answer net.ErrClosed, not
// dereference the missing reader (a device closed right after it opened used to crash this way).
func TestGROReadBetweenCloseAndSocketClose(t *testing.T) {
	c := listenPair(t, UDPConfig{}, []netip.Addr{lo1})[0]
	require.True(t, c.listeners[0].gro)
	c.closed.Store(true) // the first step of Close, with the sockets still open
	_, err := c.Receive(makeMsgs(4, 2048))
	require.ErrorIs(t, err, net.ErrClosed)
	assert.Nil(t, c.listeners[0].gror)
	c.closed.Store(false)
	require.NoError(t, c.Close())
}
