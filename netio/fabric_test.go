package netio

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFabricDelivers(t *testing.T) {
	_, _, a, b := newPair(t, FabricConfig{})
	dst := netip.AddrPortFrom(addrB, DefaultPort)
	payload := []byte("hello, fabric")
	out := []Message{
		{Buf: payload, Src: netip.AddrPortFrom(addrA, 0xC123), Dst: dst, TOS: 0x68, TTL: 5},
		{Buf: []byte("second"), Dst: dst}, // Src unset: first IPv4 address, listening port
	}
	if n, err := a.Send(out); n != 2 || err != nil {
		require.Fail(t, fmt.Sprintf("Send = %d, %v", n, err))
	}
	payload[0] = 'J' // the fabric must have copied
	in := makeMsgs(4, 100)
	n, err := b.Receive(in)
	require.Equal(t, 2, n, "Receive = %d, %v", n, err)
	require.NoError(t, err, "Receive = %d, %v", n, err)
	want := []Message{
		{Buf: []byte("hello, fabric"), Src: netip.AddrPortFrom(addrA, 0xC123), Dst: dst, TOS: 0x68, TTL: 5},
		{Buf: []byte("second"), Src: netip.AddrPortFrom(addrA, DefaultPort), Dst: dst, TTL: DefaultTTL},
	}
	for i := range want {
		g, w := in[i], want[i]
		assert.Equal(t, w.Buf, g.Buf, "message %d = %+v, want %+v", i, g, w)
		assert.Equal(t, w.Src, g.Src, "message %d = %+v, want %+v", i, g, w)
		assert.Equal(t, w.Dst, g.Dst, "message %d = %+v, want %+v", i, g, w)
		assert.Equal(t, w.TOS, g.TOS, "message %d = %+v, want %+v", i, g, w)
		assert.Equal(t, w.TTL, g.TTL, "message %d = %+v, want %+v", i, g, w)
		assert.Equal(t, 100, cap(g.Buf), "message %d: Buf re-allocated (cap %d)", i, cap(g.Buf))
	}
	ca, cb := a.Counters(), b.Counters()
	assert.Equal(t, uint64(2), ca.SentDatagrams, "counters a=%+v b=%+v", ca, cb)
	assert.Equal(t, uint64(19), ca.SentBytes, "counters a=%+v b=%+v", ca, cb)
	assert.Equal(t, uint64(2), cb.ReceivedDatagrams, "counters a=%+v b=%+v", ca, cb)
	assert.Equal(t, uint64(19), cb.ReceivedBytes, "counters a=%+v b=%+v", ca, cb)
	got := b.LocalAddrs()
	assert.False(t, len(got) != 1 || got[0] != dst, "LocalAddrs = %v", got)
}

func TestFabricIPv6AndPorts(t *testing.T) {
	_, _, a, _ := newPair(t, FabricConfig{})
	f := a.fabric
	c, err := f.NewEndpoint(18515, netip.MustParseAddr("fd00::2"))
	require.NoError(t, err)
	defer c.Close()
	dst := netip.MustParseAddrPort("[fd00::2]:18515")
	if _, err := a.Send([]Message{{Buf: []byte{1}, Dst: dst, Src: netip.AddrPortFrom(addr6, 0xD000)}}); err != nil {
		require.Fail(t, fmt.Sprint(err))
	}
	// Same address, wrong port: nobody listens there.
	if _, err := a.Send([]Message{{Buf: []byte{2}, Dst: netip.MustParseAddrPort("[fd00::2]:4791")}}); err != nil {
		require.Fail(t, fmt.Sprint(err))
	}
	in := makeMsgs(2, 8)
	n, err := c.Receive(in)
	if n != 1 || err != nil || in[0].Src != netip.AddrPortFrom(addr6, 0xD000) || in[0].Dst != dst {
		require.Fail(t, fmt.Sprintf("Receive = %d, %v, %+v", n, err, in[0]))
	}
	got := a.Counters().Drops[DropNoRoute]
	require.Equal(t, uint64(1), got, "no-route drops = %d, want 1", got)
}

// TestFabricLinkLocalZone: an endpoint on a zoned link-local address (a device names its link)
// receives what is sent to the address a GID carries, without a zone: the fabric is one link. A
// second endpoint on the same address in another zone finds it taken.
func TestFabricLinkLocalZone(t *testing.T) {
	_, _, a, _ := newPair(t, FabricConfig{})
	c, err := a.fabric.NewEndpoint(18515, netip.MustParseAddr("fe80::2%link0"))
	require.NoError(t, err)
	defer c.Close()
	_, err = a.fabric.NewEndpoint(18515, netip.MustParseAddr("fe80::2%link1"))
	require.ErrorIs(t, err, ErrAddressInUse)
	_, err = a.Send([]Message{{Buf: []byte{1}, Dst: netip.MustParseAddrPort("[fe80::2]:18515"), Src: netip.AddrPortFrom(addr6, 0xD000)}})
	require.NoError(t, err)
	in := makeMsgs(2, 8)
	n, err := c.Receive(in)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	assert.Equal(t, []byte{1}, in[0].Buf)
	assert.Equal(t, uint64(0), a.Counters().Drops[DropNoRoute])
}

func TestFabricSendErrors(t *testing.T) {
	_, _, a, _ := newPair(t, FabricConfig{})
	onlyV4, err := a.fabric.NewEndpoint(0, netip.MustParseAddr("10.0.0.9"))
	require.NoError(t, err)
	defer onlyV4.Close()
	dst := netip.AddrPortFrom(addrB, DefaultPort)
	tests := []struct {
		name string
		c    *Endpoint
		m    Message
		want error
	}{
		{"unknown source", a, Message{Src: netip.MustParseAddrPort("10.9.9.9:1"), Dst: dst}, ErrUnknownSource},
		{"family mismatch", a, Message{Src: netip.AddrPortFrom(addr6, 0), Dst: dst}, ErrAddressFamily},
		{"no destination", a, Message{}, ErrBadDestination},
		{"destination port 0", a, Message{Dst: netip.AddrPortFrom(addrB, 0)}, ErrBadDestination},
		{"unspecified destination", a, Message{Dst: netip.MustParseAddrPort("0.0.0.0:4791")}, ErrBadDestination},
		{"no address of family", onlyV4, Message{Dst: netip.MustParseAddrPort("[fd00::2]:4791")}, ErrNoSourceAddress},
		{"too long", a, Message{Buf: make([]byte, 65508), Dst: dst}, ErrMessageTooLong},
		{"segment size", a, Message{Dst: dst, SegmentSize: 1000}, ErrSegmentSize},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs := []Message{{Buf: []byte{1}, Dst: dst}, tt.m}
			n, err := tt.c.Send(msgs)
			require.Equal(t, 1, n, "Send = %d, %v; want 1, %v", n, err, tt.want)
			require.ErrorIs(t, err, tt.want, "Send = %d, %v; want 1, %v", n, err, tt.want)
		})
	}
	if _, err := a.Receive([]Message{{}}); !errors.Is(err, ErrEmptyBuffer) {
		require.Fail(t, fmt.Sprintf("Receive with empty buffer: %v", err))
	}
}

func TestFabricEndpointErrors(t *testing.T) {
	f := NewFabric(FabricConfig{})
	defer f.Close()
	e, err := f.NewEndpoint(0, addrA)
	require.NoError(t, err)
	defer e.Close()
	for _, tt := range []struct {
		addrs []netip.Addr
		want  error
	}{
		{nil, ErrNoAddresses},
		{[]netip.Addr{addrA}, ErrAddressInUse},
		{[]netip.Addr{netip.IPv4Unspecified()}, ErrWildcardAddress},
		{[]netip.Addr{netip.IPv6Unspecified()}, ErrWildcardAddress},
		{[]netip.Addr{{}}, ErrWildcardAddress},
		{[]netip.Addr{addrB, addrB}, ErrDuplicateAddress},
	} {
		if _, err := f.NewEndpoint(0, tt.addrs...); !errors.Is(err, tt.want) {
			assert.Fail(t, fmt.Sprintf("NewEndpoint(%v) = %v, want %v", tt.addrs, err, tt.want))
		}
	}
	// A different port on the same address is a different endpoint.
	e2, err := f.NewEndpoint(5000, addrA)
	require.NoError(t, err)
	e2.Close()
	if err := e2.Close(); !errors.Is(err, net.ErrClosed) {
		require.Fail(t, fmt.Sprintf("second Close = %v", err))
	}
	if _, err := e2.Send([]Message{{Dst: netip.AddrPortFrom(addrA, 4791)}}); !errors.Is(err, net.ErrClosed) {
		require.Fail(t, fmt.Sprintf("Send after Close = %v", err))
	}
}

// TestFabricNetwork checks that Network attaches an endpoint at exactly the addresses and port it
// is given, as NewEndpoint does.
func TestFabricNetwork(t *testing.T) {
	f := NewFabric(FabricConfig{})
	defer f.Close()
	c, err := f.Network()([]netip.Addr{addrA, addrB}, 5000)
	require.NoError(t, err)
	defer c.Close()
	require.Equal(t, []netip.AddrPort{netip.AddrPortFrom(addrA, 5000), netip.AddrPortFrom(addrB, 5000)}, c.LocalAddrs())
	_, err = f.Network()([]netip.Addr{addrA}, 5000)
	require.ErrorIs(t, err, ErrAddressInUse)
}

func TestFabricQueueFullAndTruncation(t *testing.T) {
	_, _, a, b := newPair(t, FabricConfig{QueueLen: 4})
	dst := netip.AddrPortFrom(addrB, DefaultPort)
	sendSeq(t, a, dst, 0, 10)
	got := b.Counters().Drops[DropQueueFull]
	require.Equal(t, uint64(6), got, "queue-full drops = %d, want 6", got)
	in := makeMsgs(4, 16)
	in[3].Buf = make([]byte, 15) // too small for datagram 3
	n, err := b.Receive(in)
	require.NoError(t, err, "Receive = %d, %v; want 3", n, err)
	require.Equal(t, 3, n, "Receive = %d, %v; want 3", n, err)
	if got := []int{seqOf(in[0].Buf), seqOf(in[1].Buf), seqOf(in[2].Buf)}; !slices.Equal(got, []int{0, 1, 2}) {
		require.Fail(t, fmt.Sprintf("received %v, want [0 1 2]", got))
	}
	c := b.Counters()
	require.Equal(t, uint64(1), c.Drops[DropTruncated], "counters %+v", c)
	require.Equal(t, uint64(3), c.ReceivedDatagrams, "counters %+v", c)
	require.Equal(t, uint64(7), c.TotalDrops(), "counters %+v", c)
}

func TestFabricReceiveBlocksUntilDatagram(t *testing.T) {
	_, _, a, b := newPair(t, FabricConfig{})
	got := make(chan int, 1)
	go func() {
		in := makeMsgs(8, 64)
		n, err := b.Receive(in)
		assert.NoError(t, err)
		got <- n
	}()
	sendSeq(t, a, netip.AddrPortFrom(addrB, DefaultPort), 0, 1)
	n := <-got
	require.Equal(t, 1, n, "Receive = %d", n)
}

func TestFabricCloseUnblocksReceive(t *testing.T) {
	_, _, _, b := newPair(t, FabricConfig{})
	errc := make(chan error, 1)
	go func() {
		_, err := b.Receive(makeMsgs(1, 64))
		errc <- err
	}()
	b.Close()
	err := <-errc
	require.ErrorIs(t, err, net.ErrClosed, "Receive after Close = %v", err)
}

func TestFabricDelayWithFakeClock(t *testing.T) {
	f, clk, a, b := newPair(t, FabricConfig{})
	require.NoError(t, f.SetLinkFaults(addrA, addrB, FaultConfig{Delay: 5 * time.Millisecond}))
	dst := netip.AddrPortFrom(addrB, DefaultPort)
	sendSeq(t, a, dst, 0, 3)
	require.Equal(t, 0, b.Queued(), "queued %d in flight %d before the delay", b.Queued(), f.InFlight())
	require.Equal(t, 3, f.InFlight(), "queued %d in flight %d before the delay", b.Queued(), f.InFlight())
	clk.Advance(4*time.Millisecond + 999*time.Microsecond)
	require.Equal(t, 0, b.Queued(), "delivered before the delay expired")
	clk.Advance(time.Microsecond)
	got := receiveAll(t, b)
	require.Equal(t, []int{0, 1, 2}, got, "received %v", got)
	// The reverse direction has no faults.
	sendSeq(t, b, netip.AddrPortFrom(addrA, DefaultPort), 7, 1)
	require.Equal(t, 1, a.Queued(), "reverse link was delayed")
}

func TestFabricHoldStepFlush(t *testing.T) {
	f, clk, a, b := newPair(t, FabricConfig{Hold: true})
	dst := netip.AddrPortFrom(addrB, DefaultPort)
	sendSeq(t, a, dst, 0, 4)
	require.Equal(t, 0, b.Queued(), "Hold delivered inside Send")
	require.Equal(t, 4, f.InFlight(), "Hold delivered inside Send")
	require.True(t, f.Step(), "Step did not deliver one datagram")
	require.Equal(t, 1, b.Queued(), "Step did not deliver one datagram")
	require.Equal(t, 3, f.Flush(), "Flush did not deliver the rest")
	require.False(t, f.Step(), "Flush did not deliver the rest")
	sendSeq(t, a, dst, 4, 1)
	clk.Advance(0)
	got := receiveAll(t, b)
	require.Equal(t, []int{0, 1, 2, 3, 4}, got, "received %v", got)
}

// runFaults sends n sequenced datagrams over a faulty link and returns what arrived, in order.
func runFaults(t testing.TB, cfg FaultConfig, n int) ([]int, FaultCounters) {
	f, clk, a, b := newPair(t, FabricConfig{QueueLen: n * 2})
	require.NoError(t, f.SetLinkFaults(addrA, addrB, cfg))
	sendSeq(t, a, netip.AddrPortFrom(addrB, DefaultPort), 0, n)
	clk.Advance(time.Second)
	return receiveAll(t, b), f.LinkFaultCounters(addrA, addrB)
}

func TestFabricFaultsReproducible(t *testing.T) {
	cfg := FaultConfig{Loss: 0.1, Reorder: 0.05, Dup: 0.05, Jitter: 100 * time.Microsecond, Seed: 7}
	first, c1 := runFaults(t, cfg, 2000)
	second, c2 := runFaults(t, cfg, 2000)
	require.Equal(t, second, first, "same seed gave different fault sequences")
	require.Equal(t, c2, c1, "same seed gave different fault sequences")
	cfg.Seed = 8
	third, _ := runFaults(t, cfg, 2000)
	require.False(t, slices.Equal(first, third), "different seeds gave the same fault sequence")
}

func TestFabricFaultRates(t *testing.T) {
	const n = 100000
	cfg := FaultConfig{Loss: 0.05, Reorder: 0.02, Dup: 0.01, Corrupt: 0.001, Seed: 42}
	got, c := runFaults(t, cfg, n)
	within := func(name string, count uint64, p, base float64) {
		// Five standard deviations of a binomial count.
		mean := p * base
		sd := 5 * sqrt(base*p*(1-p))
		assert.GreaterOrEqual(t, float64(count), mean-sd, "%s = %d, want %.0f ± %.0f", name, count, mean, sd)
		assert.LessOrEqual(t, float64(count), mean+sd, "%s = %d, want %.0f ± %.0f", name, count, mean, sd)
	}
	within("dropped", c.Dropped, cfg.Loss, n)
	kept := float64(n) - float64(c.Dropped)
	within("duplicated", c.Duplicated, cfg.Dup, kept)
	within("reordered", c.Reordered, cfg.Reorder, kept)
	within("corrupted", c.Corrupted, cfg.Corrupt, kept)
	assert.Equal(t, uint64(n), c.Sent, "sent %d received %d, counters %+v", c.Sent, len(got), c)
	assert.Equal(t, n-c.Dropped+c.Duplicated, uint64(len(got)), "sent %d received %d, counters %+v", c.Sent, len(got), c)
}

func sqrt(x float64) float64 {
	z := x
	for i := 0; i < 50; i++ {
		z = (z + x/z) / 2
	}
	return z
}

func TestFabricCorruptFlipsExactlyOneBit(t *testing.T) {
	f, clk, a, b := newPair(t, FabricConfig{})
	require.NoError(t, f.SetLinkFaults(addrA, addrB, FaultConfig{Corrupt: 1, Seed: 3}))
	payload := bytes.Repeat([]byte{0x5A, 0xC3}, 40)
	sent := slices.Clone(payload)
	in := makeMsgs(1, 100)
	flipped := map[int]bool{}
	for i := 0; i < 200; i++ {
		_, err := a.Send([]Message{{Buf: payload, Dst: netip.AddrPortFrom(addrB, DefaultPort)}})
		require.NoError(t, err)
		clk.Advance(0)
		resetBufs(in)
		n, err := b.Receive(in)
		require.Equal(t, 1, n, fmt.Sprint(n, err))
		require.NoError(t, err, fmt.Sprint(n, err))
		require.Equal(t, sent, payload, "sender's buffer was modified")
		bits := 0
		for k := range payload {
			if x := payload[k] ^ in[0].Buf[k]; x != 0 {
				for ; x != 0; x &= x - 1 {
					bits++
				}
				flipped[k] = true
			}
		}
		require.Equal(t, 1, bits, "datagram %d: %d bits differ, want exactly 1", i, bits)
		require.Len(t, in[0].Buf, len(payload), "datagram %d: %d bits differ, want exactly 1", i, bits)
	}
	require.GreaterOrEqual(t, len(flipped), 40, "corruption hit only %d distinct bytes out of 80", len(flipped))
}

func TestFabricReorderReorders(t *testing.T) {
	got, c := runFaults(t, FaultConfig{Reorder: 0.2, Seed: 11}, 200)
	require.NotEqual(t, uint64(0), c.Reordered, "no reordering: %v", got)
	require.False(t, slices.IsSorted(got), "no reordering: %v", got)
	sorted := slices.Clone(got)
	slices.Sort(sorted)
	for i, s := range sorted {
		require.Equal(t, i, s, "lost or duplicated datagrams: %v", sorted)
	}
}

func TestFabricDupAndJitter(t *testing.T) {
	f, clk, a, b := newPair(t, FabricConfig{})
	cfg := FaultConfig{Dup: 1, Delay: time.Millisecond, Jitter: time.Millisecond, Seed: 5}
	require.NoError(t, f.SetLinkFaults(addrA, addrB, cfg))
	sendSeq(t, a, netip.AddrPortFrom(addrB, DefaultPort), 0, 50)
	clk.Advance(time.Millisecond - 1)
	require.Equal(t, 0, b.Queued(), "delivered before the fixed delay")
	clk.Advance(time.Millisecond)
	require.False(t, f.InFlight() == 0 && b.Queued() == 0, "nothing delivered after delay+jitter")
	clk.Advance(1)
	got := receiveAll(t, b)
	require.Len(t, got, 100, "got %d datagrams (%d in flight), want every datagram twice", len(got), f.InFlight())
	require.Equal(t, 0, f.InFlight(), "got %d datagrams (%d in flight), want every datagram twice", len(got), f.InFlight())
}

func TestFabricSendReceiveAllocs(t *testing.T) {
	_, _, a, b := newPair(t, FabricConfig{})
	out := makeMsgs(16, 1040)
	for i := range out {
		out[i].Dst = netip.AddrPortFrom(addrB, DefaultPort)
		out[i].Src = netip.AddrPortFrom(addrA, 0xC001)
	}
	in := makeMsgs(16, 2048)
	round := func() {
		if _, err := a.Send(out); err != nil {
			t.Fatal(err)
		}
		resetBufs(in)
		if n, err := b.Receive(in); n != 16 || err != nil {
			t.Fatal(n, err)
		}
	}
	round() // grow the queue slots
	allocs := testing.AllocsPerRun(100, round)
	require.Equal(t, float64(0), allocs, "%v allocations per Send+Receive of 16 datagrams, want 0", allocs)
}

func BenchmarkFabric(b *testing.B) {
	for _, size := range []int{80, 1040, 4112} {
		b.Run(byteSize(size), func(b *testing.B) {
			_, _, ea, eb := newPair(b, FabricConfig{})
			out := makeMsgs(IdealBatchSize, size)
			for i := range out {
				out[i].Dst = netip.AddrPortFrom(addrB, DefaultPort)
			}
			in := makeMsgs(IdealBatchSize, 4200)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for i := 0; i < b.N; i += IdealBatchSize {
				if _, err := ea.Send(out); err != nil {
					b.Fatal(err)
				}
				for got := 0; got < IdealBatchSize; {
					resetBufs(in)
					n, err := eb.Receive(in)
					if err != nil {
						b.Fatal(err)
					}
					got += n
				}
			}
		})
	}
}

func byteSize(n int) string {
	return string(rune('0'+n/1000%10)) + string(rune('0'+n/100%10)) + string(rune('0'+n/10%10)) + string(rune('0'+n%10)) + "B"
}
