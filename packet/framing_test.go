package packet

import (
	"bytes"
	"errors"
	"net/netip"
	"testing"
)

func TestEnvelopeIPv6RoundTrip(t *testing.T) {
	env := Envelope{
		Src:          netip.MustParseAddrPort("[fe80::1]:49153"),
		Dst:          netip.MustParseAddrPort("[fe80::2]:4791"),
		TrafficClass: 0xB8, HopLimit: 255, FlowLabel: 0x12345,
	}
	pkt := mustAppend(t, &Headers{BTH: BTHFields{Opcode: UDSendOnlyWithImmediate, PKey: 0xFFFF, DestQP: 1}, DETH: DETHFields{QKey: GSIQKey, SrcQP: 1}, ImmDt: ImmDtFields{ImmediateData: 42}}, []byte{1, 2, 3})
	if err := env.PutICRC(pkt); err != nil {
		t.Fatal(err)
	}
	b, err := env.AppendHeaders([]byte{0xEE}, len(pkt))
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0xEE,
		0x6B, 0x81, 0x23, 0x45, 0x00, 0x08 + 0x20, 17, 255, // version, TC, flow label, length, UDP, hop limit
		0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
		0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,
		0xC0, 0x01, 0x12, 0xB7, 0x00, 0x28, 0x00, 0x00, // UDP
	}
	if len(pkt) != 0x20 || !bytes.Equal(b, want) {
		t.Fatalf("headers (packet %d bytes)\n% x\nwant\n% x", len(pkt), b, want)
	}
	b = append(b, pkt...)
	got, payload, err := ParseEnvelope(b[1:])
	if err != nil || got != env || !bytes.Equal(payload, pkt) {
		t.Fatalf("ParseEnvelope: %+v %v", got, err)
	}
	if err := got.VerifyICRC(payload); err != nil {
		t.Fatal(err)
	}
	if env.HeaderLen() != 48 || (&Envelope{}).HeaderLen() != 0 {
		t.Error("HeaderLen")
	}
}

func TestEnvelopeMappedIPv4(t *testing.T) {
	mapped := Envelope{
		Src: netip.MustParseAddrPort("[::ffff:10.0.0.1]:49153"),
		Dst: netip.MustParseAddrPort("[::ffff:10.0.0.2]:4791"),
	}
	plain := Envelope{Src: netip.MustParseAddrPort("10.0.0.1:49153"), Dst: netip.MustParseAddrPort("10.0.0.2:4791")}
	a, _ := mapped.AppendHeaders(nil, 16)
	b, _ := plain.AppendHeaders(nil, 16)
	if !bytes.Equal(a, b) || len(a) != 28 {
		t.Fatalf("mapped % x\nplain  % x", a, b)
	}
	// The IPv4 header checksum must verify: the sum over the header is 0xFFFF.
	if ipv4HeaderChecksum(a[:20]) != 0 {
		t.Error("IPv4 header checksum does not verify")
	}
}

func TestParseEnvelopeErrors(t *testing.T) {
	env := Envelope{Src: netip.MustParseAddrPort("10.0.0.1:1"), Dst: netip.MustParseAddrPort("10.0.0.2:4791"), IPFlags: IPv4DontFragment}
	good, err := env.AppendHeaders(nil, 16)
	if err != nil {
		t.Fatal(err)
	}
	good = append(good, make([]byte, 16)...)
	mod := func(f func([]byte)) []byte {
		c := bytes.Clone(good)
		f(c)
		return c
	}
	cases := []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrTruncated},
		{"short v4", good[:19], ErrTruncated},
		{"short datagram", good[:len(good)-1], ErrTruncated},
		{"short v6", []byte{0x60, 0, 0, 0}, ErrTruncated},
		{"version 5", mod(func(b []byte) { b[0] = 0x55 }), ErrBadIPHeader},
		{"options", mod(func(b []byte) { b[0] = 0x46 }), ErrBadIPHeader},
		{"tcp", mod(func(b []byte) { b[9] = 6 }), ErrBadIPHeader},
		{"more fragments", mod(func(b []byte) { b[6] |= 0x20 }), ErrBadIPHeader},
		{"fragment offset", mod(func(b []byte) { b[7] = 1 }), ErrBadIPHeader},
		{"total length small", mod(func(b []byte) { b[2], b[3] = 0, 27 }), ErrBadLength},
		{"udp length", mod(func(b []byte) { b[25]++ }), ErrBadLength},
	}
	for _, c := range cases {
		if _, _, err := ParseEnvelope(c.b); !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
	// Trailing link-layer padding is dropped.
	e, p, err := ParseEnvelope(append(bytes.Clone(good), 0, 0, 0))
	if err != nil || len(p) != 16 || e.IPFlags != IPv4DontFragment {
		t.Errorf("padded: %v %d %+v", err, len(p), e)
	}
	if _, err := env.AppendHeaders(nil, maxIPv4Payload+1); !errors.Is(err, ErrTooLong) {
		t.Errorf("too long: %v", err)
	}
	if _, err := (&Envelope{}).AppendHeaders(nil, 1); !errors.Is(err, ErrAddressFamily) {
		t.Errorf("no addresses: %v", err)
	}
}

func FuzzParseEnvelope(f *testing.F) {
	for _, g := range golden(f)[:4] {
		h, err := g.env.AppendHeaders(nil, len(g.pkt))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(append(h, g.pkt...))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		e, p, err := ParseEnvelope(b)
		if err != nil {
			return
		}
		h, err := e.AppendHeaders(nil, len(p))
		if err != nil {
			t.Fatalf("AppendHeaders of a parsed envelope: %v", err)
		}
		e2, p2, err := ParseEnvelope(append(h, p...))
		if err != nil || e2 != e || !bytes.Equal(p, p2) {
			t.Fatalf("re-encoded envelope differs: %+v / %+v (%v)", e, e2, err)
		}
	})
}
