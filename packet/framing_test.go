package packet

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEnvelopeIPv6RoundTrip(t *testing.T) {
	env := Envelope{
		Src:          netip.MustParseAddrPort("[fe80::1]:49153"),
		Dst:          netip.MustParseAddrPort("[fe80::2]:4791"),
		TrafficClass: 0xB8, HopLimit: 255, FlowLabel: 0x12345,
	}
	pkt := mustAppend(t, &Headers{BTH: BTHFields{Opcode: UDSendOnlyWithImmediate, PKey: 0xFFFF, DestQP: 1}, DETH: DETHFields{QKey: GSIQKey, SrcQP: 1}, ImmDt: ImmDtFields{ImmediateData: 42}}, []byte{1, 2, 3})
	require.NoError(t, env.PutICRC(pkt))
	b, err := env.AppendHeaders([]byte{0xEE}, len(pkt))
	require.NoError(t, err)
	want := []byte{0xEE,
		0x6B, 0x81, 0x23, 0x45, 0x00, 0x08 + 0x20, 17, 255, // version, TC, flow label, length, UDP, hop limit
		0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
		0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,
		0xC0, 0x01, 0x12, 0xB7, 0x00, 0x28, 0x00, 0x00, // UDP
	}
	require.Len(t, pkt, 0x20, "headers (packet %d bytes)\n% x\nwant\n% x", len(pkt), b, want)
	require.Equal(t, want, b, "headers (packet %d bytes)\n% x\nwant\n% x", len(pkt), b, want)
	b = append(b, pkt...)
	got, payload, err := ParseEnvelope(b[1:])
	require.NoError(t, err, "ParseEnvelope: %+v %v", got, err)
	require.Equal(t, env, got, "ParseEnvelope: %+v %v", got, err)
	require.Equal(t, pkt, payload, "ParseEnvelope: %+v %v", got, err)
	require.NoError(t, got.VerifyICRC(payload))
	assert.Equal(t, 48, env.HeaderLen(), "HeaderLen")
	assert.Equal(t, 0, (&Envelope{}).HeaderLen(), "HeaderLen")
}

func TestEnvelopeMappedIPv4(t *testing.T) {
	mapped := Envelope{
		Src: netip.MustParseAddrPort("[::ffff:10.0.0.1]:49153"),
		Dst: netip.MustParseAddrPort("[::ffff:10.0.0.2]:4791"),
	}
	plain := Envelope{Src: netip.MustParseAddrPort("10.0.0.1:49153"), Dst: netip.MustParseAddrPort("10.0.0.2:4791")}
	a, _ := mapped.AppendHeaders(nil, 16)
	b, _ := plain.AppendHeaders(nil, 16)
	require.Equal(t, b, a, "mapped % x\nplain  % x", a, b)
	require.Len(t, a, 28, "mapped % x\nplain  % x", a, b)
	// The IPv4 header checksum must verify: the sum over the header is 0xFFFF.
	assert.Equal(t, uint16(0), ipv4HeaderChecksum(a[:20]), "IPv4 header checksum does not verify")
}

func TestParseEnvelopeErrors(t *testing.T) {
	env := Envelope{Src: netip.MustParseAddrPort("10.0.0.1:1"), Dst: netip.MustParseAddrPort("10.0.0.2:4791"), IPFlags: IPv4DontFragment}
	good, err := env.AppendHeaders(nil, 16)
	require.NoError(t, err)
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
			assert.Fail(t, fmt.Sprintf("%s: got %v, want %v", c.name, err, c.want))
		}
	}
	// Trailing link-layer padding is dropped.
	e, p, err := ParseEnvelope(append(bytes.Clone(good), 0, 0, 0))
	assert.NoError(t, err, "padded: %v %d %+v", err, len(p), e)
	assert.Len(t, p, 16, "padded: %v %d %+v", err, len(p), e)
	assert.Equal(t, IPv4DontFragment, e.IPFlags, "padded: %v %d %+v", err, len(p), e)
	if _, err := env.AppendHeaders(nil, maxIPv4Payload+1); !errors.Is(err, ErrTooLong) {
		assert.Fail(t, fmt.Sprintf("too long: %v", err))
	}
	if _, err := (&Envelope{}).AppendHeaders(nil, 1); !errors.Is(err, ErrAddressFamily) {
		assert.Fail(t, fmt.Sprintf("no addresses: %v", err))
	}
}

func FuzzParseEnvelope(f *testing.F) {
	for _, g := range golden(f)[:4] {
		h, err := g.env.AppendHeaders(nil, len(g.pkt))
		require.NoError(f, err)
		f.Add(append(h, g.pkt...))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		e, p, err := ParseEnvelope(b)
		if err != nil {
			return
		}
		h, err := e.AppendHeaders(nil, len(p))
		require.NoError(t, err, "AppendHeaders of a parsed envelope")
		e2, p2, err := ParseEnvelope(append(h, p...))
		require.NoError(t, err, "re-encoded envelope differs: %+v / %+v (%v)", e, e2, err)
		require.Equal(t, e, e2, "re-encoded envelope differs: %+v / %+v (%v)", e, e2, err)
		require.Equal(t, p2, p, "re-encoded envelope differs: %+v / %+v (%v)", e, e2, err)
	})
}
