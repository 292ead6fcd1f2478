package netio

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/clock"
)

func TestTapSeesEveryDatagramOnce(t *testing.T) {
	f := NewFabric(FabricConfig{})
	defer f.Close()
	a := netip.MustParseAddr("10.0.0.1")
	b := netip.MustParseAddr("10.0.0.2")
	ea, err := f.NewEndpoint(DefaultPort, a)
	require.NoError(t, err)
	eb, err := f.NewEndpoint(DefaultPort, b)
	require.NoError(t, err)
	var sent, received []string
	ta := Tap(ea, func(dir Direction, m *Message) {
		if dir == Sent {
			sent = append(sent, string(m.Buf))
		}
	})
	tb := Tap(eb, func(dir Direction, m *Message) {
		if dir == Received {
			received = append(received, string(m.Buf)+"@"+m.Src.String())
		}
	})
	dst := netip.AddrPortFrom(b, DefaultPort)
	msgs := []Message{{Buf: []byte("one"), Dst: dst}, {Buf: []byte("two"), Dst: dst}}
	if n, err := ta.Send(msgs); n != 2 || err != nil {
		require.Fail(t, fmt.Sprintf("Send = %d, %v", n, err))
	}
	in := []Message{{Buf: make([]byte, 16)}, {Buf: make([]byte, 16)}}
	if n, err := tb.Receive(in); n != 2 || err != nil {
		require.Fail(t, fmt.Sprintf("Receive = %d, %v", n, err))
	}
	want := []string{"one", "two"}
	assert.False(t, len(sent) != 2 || sent[0] != want[0] || sent[1] != want[1], "tap saw sent %q, want %q", sent, want)
	src := netip.AddrPortFrom(a, DefaultPort).String()
	want = []string{"one@" + src, "two@" + src}
	assert.False(t, len(received) != 2 || received[0] != want[0] || received[1] != want[1], "tap saw received %q, want %q", received, want)
}

// TestFaultConnObserverSeesWireOrder checks that the observer is shown every datagram of a batch in
// the order the network gets it, a loss in its own place, with the marks of what the faults did,
// and that it agrees with the fault counters and with what the receiver gets.
func TestFaultConnObserverSeesWireOrder(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	f := NewFabric(FabricConfig{Clock: clk})
	defer f.Close()
	a, b := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")
	ea, err := f.NewEndpoint(DefaultPort, a)
	require.NoError(t, err)
	eb, err := f.NewEndpoint(DefaultPort, b)
	require.NoError(t, err)
	fc, err := WithFaults(ea, FaultConfig{Loss: 0.3, Dup: 0.2, Corrupt: 0.2, Reorder: 0.2, Seed: 7}, clk)
	require.NoError(t, err)

	type seen struct {
		dir Direction
		seq byte // first byte of the datagram as the caller sent it (corruption may flip it later)
	}
	var order []seen
	seqOf := map[string]byte{}
	fc.Observe(func(dir Direction, m *Message) {
		order = append(order, seen{dir, seqOf[string(m.Buf[1:])]})
	})

	const n = 200
	dst := netip.AddrPortFrom(b, DefaultPort)
	batch := make([]Message, n)
	for i := range batch {
		// byte 0 is the sequence; the rest names the datagram even when a bit of it was flipped
		// in byte 0 (corruption picks any bit, so the tail is matched only when intact).
		body := []byte{byte(i), 'p', byte(i), byte(i >> 8)}
		seqOf[string(body[1:])] = byte(i)
		batch[i] = Message{Buf: body, Dst: dst}
	}
	sent, err := fc.Send(batch)
	require.NoError(t, err)
	require.Equal(t, n, sent)

	// Undelayed datagrams are shown in batch order, losses included, before any late one.
	var last = -1
	lost, dup, corrupt := 0, 0, 0
	for _, s := range order {
		require.NotEqual(t, Received, s.dir.Base())
		require.False(t, s.dir.Has(Delayed), "a delayed datagram was shown before its delay expired: %v", s.dir)
		if !s.dir.Has(Corrupt) {
			require.GreaterOrEqual(t, int(s.seq), last, "datagram %d shown after %d", s.seq, last)
			last = int(s.seq)
		}
		switch {
		case s.dir == Lost:
			lost++
		case s.dir.Has(Duplicate):
			dup++
		}
		if s.dir.Has(Corrupt) {
			corrupt++
		}
	}
	before := len(order)
	clk.Advance(time.Second) // every delay and reordering falls due
	late := order[before:]
	for _, s := range late {
		require.True(t, s.dir.Has(Delayed), "late datagram shown as %v", s.dir)
		if s.dir.Has(Duplicate) {
			dup++
		}
		if s.dir.Has(Corrupt) {
			corrupt++
		}
	}
	fcs := fc.FaultCounters()
	assert.Equal(t, fcs.Dropped, uint64(lost))
	assert.Equal(t, fcs.Duplicated, uint64(dup))
	assert.NotZero(t, lost)
	assert.NotZero(t, dup)
	assert.NotZero(t, corrupt)
	assert.NotEmpty(t, late)

	// Everything shown as sent reached the receiver.
	wire := len(order) - lost
	got := 0
	in := make([]Message, 64)
	for i := range in {
		in[i].Buf = make([]byte, 16)
	}
	for {
		k, err := eb.Receive(in)
		require.NoError(t, err)
		got += k
		if k == 0 || got >= wire {
			break
		}
	}
	assert.Equal(t, wire, got)
}

func TestDirectionString(t *testing.T) {
	for _, tc := range []struct {
		d    Direction
		want string
	}{
		{Sent, "sent"},
		{Received, "received"},
		{Lost, "lost"},
		{Sent | Duplicate | Corrupt, "sent (duplicate, corrupted)"},
		{Sent | Delayed, "sent (delayed)"},
	} {
		assert.Equal(t, tc.want, tc.d.String())
	}
}
