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
