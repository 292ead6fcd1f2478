package netio

import (
	"bytes"
	"errors"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/gorxe/gorxe/clock"
)

// faultyPair wraps endpoint a of a fresh fabric pair in a FaultConn.
func faultyPair(t *testing.T, cfg FaultConfig) (*FaultConn, *clock.Fake, *Endpoint) {
	t.Helper()
	_, clk, a, b := newPair(t, FabricConfig{QueueLen: 4096})
	fc, err := WithFaults(a, cfg, clk)
	if err != nil {
		t.Fatal(err)
	}
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
	if !slices.Equal(first, second) || c1 != c2 {
		t.Fatal("same seed, different drop pattern")
	}
	if c1.Sent != 1000 || int(c1.Dropped)+len(first) != 1000 || c1.Dropped < 250 || c1.Dropped > 350 {
		t.Fatalf("counters %+v, received %d", c1, len(first))
	}
}

func TestFaultConnCorruptsACopy(t *testing.T) {
	fc, _, b := faultyPair(t, FaultConfig{Corrupt: 1, Seed: 1})
	payload := []byte("do not touch my buffer")
	orig := slices.Clone(payload)
	if n, err := fc.Send([]Message{{Buf: payload, Dst: netip.AddrPortFrom(addrB, DefaultPort)}}); n != 1 || err != nil {
		t.Fatal(n, err)
	}
	if !bytes.Equal(payload, orig) {
		t.Fatal("caller's buffer was corrupted")
	}
	in := makeMsgs(1, 64)
	if _, err := b.Receive(in); err != nil {
		t.Fatal(err)
	}
	diff := 0
	for i := range orig {
		for x := orig[i] ^ in[0].Buf[i]; x != 0; x &= x - 1 {
			diff++
		}
	}
	if diff != 1 || fc.FaultCounters().Corrupted != 1 {
		t.Fatalf("%d bits differ, counters %+v", diff, fc.FaultCounters())
	}
}

func TestFaultConnDelayAndReorder(t *testing.T) {
	fc, clk, b := faultyPair(t, FaultConfig{Delay: 2 * time.Millisecond, Reorder: 0.5, ReorderDelay: time.Millisecond, Seed: 4})
	sendSeq(t, fc, netip.AddrPortFrom(addrB, DefaultPort), 0, 100)
	if b.Queued() != 0 || fc.InFlight() != 100 {
		t.Fatalf("queued %d, in flight %d", b.Queued(), fc.InFlight())
	}
	clk.Advance(2 * time.Millisecond)
	c := fc.FaultCounters()
	if b.Queued() != 100-int(c.Reordered) {
		t.Fatalf("after the delay %d queued, want %d", b.Queued(), 100-c.Reordered)
	}
	clk.Advance(time.Millisecond)
	got := receiveAll(t, b)
	if len(got) != 100 || slices.IsSorted(got) || c.Delayed != 100 {
		t.Fatalf("received %v, counters %+v", got, c)
	}
}

func TestFaultConnDuplicates(t *testing.T) {
	fc, _, b := faultyPair(t, FaultConfig{Dup: 1})
	sendSeq(t, fc, netip.AddrPortFrom(addrB, DefaultPort), 0, 3)
	if got := receiveAll(t, b); !slices.Equal(got, []int{0, 0, 1, 1, 2, 2}) {
		t.Fatalf("received %v", got)
	}
}

func TestFaultConnErrorIndex(t *testing.T) {
	fc, _, _ := faultyPair(t, FaultConfig{Dup: 1})
	msgs := []Message{
		{Buf: []byte{1}, Dst: netip.AddrPortFrom(addrB, DefaultPort)},
		{Buf: []byte{2}, Dst: netip.AddrPortFrom(addrB, DefaultPort)},
		{Buf: []byte{3}}, // no destination
	}
	if n, err := fc.Send(msgs); n != 2 || !errors.Is(err, ErrBadDestination) {
		t.Fatalf("Send = %d, %v; want 2, ErrBadDestination", n, err)
	}
	if _, err := WithFaults(fc, FaultConfig{Loss: -1}, nil); !errors.Is(err, ErrInvalidFaultValue) {
		t.Fatalf("WithFaults(bad config) = %v", err)
	}
}
