package netio

import (
	"net/netip"
	"testing"
)

func TestTapSeesEveryDatagramOnce(t *testing.T) {
	f := NewFabric(FabricConfig{})
	defer f.Close()
	a := netip.MustParseAddr("10.0.0.1")
	b := netip.MustParseAddr("10.0.0.2")
	ea, err := f.NewEndpoint(DefaultPort, a)
	if err != nil {
		t.Fatal(err)
	}
	eb, err := f.NewEndpoint(DefaultPort, b)
	if err != nil {
		t.Fatal(err)
	}
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
		t.Fatalf("Send = %d, %v", n, err)
	}
	in := []Message{{Buf: make([]byte, 16)}, {Buf: make([]byte, 16)}}
	if n, err := tb.Receive(in); n != 2 || err != nil {
		t.Fatalf("Receive = %d, %v", n, err)
	}
	if want := []string{"one", "two"}; len(sent) != 2 || sent[0] != want[0] || sent[1] != want[1] {
		t.Errorf("tap saw sent %q, want %q", sent, want)
	}
	src := netip.AddrPortFrom(a, DefaultPort).String()
	if want := []string{"one@" + src, "two@" + src}; len(received) != 2 || received[0] != want[0] || received[1] != want[1] {
		t.Errorf("tap saw received %q, want %q", received, want)
	}
}

func TestFaultConnObserverSeesLosses(t *testing.T) {
	f := NewFabric(FabricConfig{})
	defer f.Close()
	a, b := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")
	ea, err := f.NewEndpoint(DefaultPort, a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.NewEndpoint(DefaultPort, b); err != nil {
		t.Fatal(err)
	}
	onWire, lost := 0, 0
	fc, err := WithFaults(Tap(ea, func(Direction, *Message) { onWire++ }), FaultConfig{Loss: 0.5, Seed: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	fc.Observe(func(dir Direction, m *Message) {
		if dir != Lost {
			t.Errorf("observer got %v, want lost", dir)
		}
		lost++
	})
	dst := netip.AddrPortFrom(b, DefaultPort)
	for range 100 {
		if _, err := fc.Send([]Message{{Buf: []byte("x"), Dst: dst}}); err != nil {
			t.Fatal(err)
		}
	}
	if got := fc.FaultCounters().Dropped; uint64(lost) != got || onWire+lost != 100 || lost == 0 {
		t.Errorf("observer saw %d losses, counters %d, %d reached the wire; want them to add up to 100", lost, got, onWire)
	}
}
