package netio

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/clock"
)

// faultyPair wraps endpoint a of a fresh fabric pair in a FaultConn.
func faultyPair(t *testing.T, cfg FaultConfig) (*FaultConn, *clock.Fake, *Endpoint) {
	t.Helper()
	_, clk, a, b := newPair(t, FabricConfig{QueueLen: 4096})
	fc, err := WithFaults(a, cfg, clk)
	require.NoError(t, err)
	return fc, clk, b
}

func TestFaultConnReproducibleLoss(t *testing.T) {
	run := func() ([]int, FaultCounters) {
		fc, _, b := faultyPair(t, FaultConfig{Loss: 0.3, Seed: 99})
		sendSeq(t, fc, netip.AddrPortFrom(addrB, DefaultPort), 0, 1000)
		return receiveAll(t, b), fc.FaultCounters()
	}
	first, c1 := run()
	second, c2 := run()
	require.Equal(t, second, first, "same seed, different drop pattern")
	require.Equal(t, c2, c1, "same seed, different drop pattern")
	require.Equal(t, uint64(1000), c1.Sent, "counters %+v, received %d", c1, len(first))
	require.Equal(t, 1000, int(c1.Dropped)+len(first), "counters %+v, received %d", c1, len(first))
	require.GreaterOrEqual(t, c1.Dropped, uint64(250), "counters %+v, received %d", c1, len(first))
	require.LessOrEqual(t, c1.Dropped, uint64(350), "counters %+v, received %d", c1, len(first))
}

func TestFaultConnCorruptsACopy(t *testing.T) {
	fc, _, b := faultyPair(t, FaultConfig{Corrupt: 1, Seed: 1})
	payload := []byte("do not touch my buffer")
	orig := slices.Clone(payload)
	n, err := fc.Send([]Message{{Buf: payload, Dst: netip.AddrPortFrom(addrB, DefaultPort)}})
	require.Equal(t, 1, n, fmt.Sprint(n, err))
	require.NoError(t, err, fmt.Sprint(n, err))
	require.Equal(t, orig, payload, "caller's buffer was corrupted")
	in := makeMsgs(1, 64)
	_, err = b.Receive(in)
	require.NoError(t, err)
	diff := 0
	for i := range orig {
		for x := orig[i] ^ in[0].Buf[i]; x != 0; x &= x - 1 {
			diff++
		}
	}
	require.Equal(t, 1, diff, "%d bits differ, counters %+v", diff, fc.FaultCounters())
	require.Equal(t, uint64(1), fc.FaultCounters().Corrupted, "%d bits differ, counters %+v", diff, fc.FaultCounters())
}

func TestFaultConnDelayAndReorder(t *testing.T) {
	fc, clk, b := faultyPair(t, FaultConfig{Delay: 2 * time.Millisecond, Reorder: 0.5, ReorderDelay: time.Millisecond, Seed: 4})
	sendSeq(t, fc, netip.AddrPortFrom(addrB, DefaultPort), 0, 100)
	require.Equal(t, 0, b.Queued(), "queued %d, in flight %d", b.Queued(), fc.InFlight())
	require.Equal(t, 100, fc.InFlight(), "queued %d, in flight %d", b.Queued(), fc.InFlight())
	clk.Advance(2 * time.Millisecond)
	c := fc.FaultCounters()
	require.Equal(t, 100-int(c.Reordered), b.Queued(), "after the delay %d queued, want %d", b.Queued(), 100-c.Reordered)
	clk.Advance(time.Millisecond)
	got := receiveAll(t, b)
	require.Len(t, got, 100, "received %v, counters %+v", got, c)
	require.False(t, slices.IsSorted(got), "received %v, counters %+v", got, c)
	require.Equal(t, uint64(100), c.Delayed, "received %v, counters %+v", got, c)
}

func TestFaultConnDuplicates(t *testing.T) {
	fc, _, b := faultyPair(t, FaultConfig{Dup: 1})
	sendSeq(t, fc, netip.AddrPortFrom(addrB, DefaultPort), 0, 3)
	got := receiveAll(t, b)
	require.Equal(t, []int{0, 0, 1, 1, 2, 2}, got, "received %v", got)
}

func TestFaultConnErrorIndex(t *testing.T) {
	fc, _, _ := faultyPair(t, FaultConfig{Dup: 1})
	msgs := []Message{
		{Buf: []byte{1}, Dst: netip.AddrPortFrom(addrB, DefaultPort)},
		{Buf: []byte{2}, Dst: netip.AddrPortFrom(addrB, DefaultPort)},
		{Buf: []byte{3}}, // no destination
	}
	n, err := fc.Send(msgs)
	require.Equal(t, 2, n, "Send = %d, %v; want 2, ErrBadDestination", n, err)
	require.ErrorIs(t, err, ErrBadDestination, "Send = %d, %v; want 2, ErrBadDestination", n, err)
	_, err = WithFaults(fc, FaultConfig{Loss: -1}, nil)
	require.ErrorIs(t, err, ErrInvalidFaultValue, "WithFaults(bad config) = %v", err)
}
