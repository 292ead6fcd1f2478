package packet

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mustAppend builds a packet or fails the test.
func mustAppend(t testing.TB, h *Headers, payload []byte) []byte {
	t.Helper()
	b, err := AppendPacket(nil, h, payload)
	if err != nil {
		require.Fail(t, fmt.Sprintf("AppendPacket(%v, %d bytes): %v", h.BTH.Opcode, len(payload), err))
	}
	return b
}

func TestParseErrors(t *testing.T) {
	ack := mustAppend(t, &Headers{BTH: BTHFields{Opcode: RCAcknowledge}}, nil)
	send := mustAppend(t, &Headers{BTH: BTHFields{Opcode: RCSendOnly}}, []byte{1, 2, 3, 4, 5})
	atomicWrite := mustAppend(t, &Headers{BTH: BTHFields{Opcode: RCAtomicWrite}}, make([]byte, 8))
	mod := func(b []byte, f func([]byte)) []byte {
		c := bytes.Clone(b)
		f(c)
		return c
	}
	cases := []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrTruncated},
		{"bth only", make([]byte, BTHSize), ErrTruncated},
		{"tver 1", mod(send, func(b []byte) { b[1] |= 1 }), ErrBadTransportVersion},
		{"reserved opcode 0x15", mod(send, func(b []byte) { b[0] = 0x15 }), ErrUnknownOpcode},
		{"xrc opcode", mod(send, func(b []byte) { b[0] = 0xA4 }), ErrUnknownOpcode},
		{"msp opcode", mod(send, func(b []byte) { b[0] = 0xE0 }), ErrUnknownOpcode},
		{"ack missing aeth", ack[:BTHSize+ICRCSize], ErrTruncated},
		{"ack with payload", append(bytes.Clone(ack), 0, 0, 0, 0), ErrUnexpectedPayload},
		{"ack with pad count", mod(ack, func(b []byte) { BTH(b).SetPadCount(1) }), ErrBadPad},
		{"pad beyond payload", mod(send[:BTHSize+ICRCSize], func(b []byte) { BTH(b).SetPadCount(1) }), ErrBadPad},
		{"misaligned", append(bytes.Clone(send), 0), ErrBadPad},
		{"pad 3 of empty", mod(mustAppend(t, &Headers{BTH: BTHFields{Opcode: RCSendOnly}}, nil), func(b []byte) { BTH(b).SetPadCount(3) }), ErrBadPad},
		{"atomic write 4 bytes", mod(atomicWrite[:len(atomicWrite)-4], func([]byte) {}), ErrBadPayloadLength},
		{"atomic write padded", mod(atomicWrite, func(b []byte) { BTH(b).SetPadCount(1) }), ErrBadPayloadLength},
	}
	for _, c := range cases {
		p := Parsed{b: []byte{1}} // must be reset on error
		err := Parse(c.b, &p)
		assert.ErrorIs(t, err, c.want, "%s: got %v, want %v", c.name, err, c.want)
		assert.Nil(t, p.Bytes(), "%s: Parsed not reset after error", c.name)
		assert.Nil(t, p.BTH(), "%s: Parsed not reset after error", c.name)
		assert.Nil(t, p.Payload(), "%s: Parsed not reset after error", c.name)
		assert.Nil(t, p.RETH(), "%s: Parsed not reset after error", c.name)
		assert.Equal(t, 0, p.HeaderLen(), "%s: Parsed not reset after error", c.name)
	}
	for _, b := range [][]byte{ack, send, atomicWrite} {
		var p Parsed
		assert.NoError(t, Parse(b, &p), "valid %v", BTH(b).Opcode())
	}
}

func TestParseViews(t *testing.T) {
	h := Headers{
		BTH:   BTHFields{Opcode: RCRDMAWriteOnlyWithImmediate, SolicitedEvent: true, PKey: 0xFFFF, DestQP: 0x123456, AckReq: true, PSN: 0xFFFFFE},
		RETH:  RETHFields{VirtualAddress: 0x0102030405060708, RKey: 0xA1B2C3D4, DMALength: 5},
		ImmDt: ImmDtFields{ImmediateData: 0xDEADBEEF},
	}
	payload := []byte("hello")
	b := mustAppend(t, &h, payload)
	want := []byte{
		0x0B, 0x80 | 3<<4, 0xFF, 0xFF, 0x00, 0x12, 0x34, 0x56, 0x80, 0xFF, 0xFF, 0xFE, // BTH
		1, 2, 3, 4, 5, 6, 7, 8, 0xA1, 0xB2, 0xC3, 0xD4, 0, 0, 0, 5, // RETH
		0xDE, 0xAD, 0xBE, 0xEF, // ImmDt
		'h', 'e', 'l', 'l', 'o', 0, 0, 0, // payload, pad
		0, 0, 0, 0, // ICRC placeholder
	}
	require.Equal(t, want, b, "encoded\n% x\nwant\n% x", b, want)
	var p Parsed
	require.NoError(t, Parse(b, &p))
	assert.Equal(t, payload, p.Payload(), "payload %q pad %d hdr %d op %v", p.Payload(), p.PadCount(), p.HeaderLen(), p.Opcode())
	assert.Equal(t, 3, p.PadCount(), "payload %q pad %d hdr %d op %v", p.Payload(), p.PadCount(), p.HeaderLen(), p.Opcode())
	assert.Equal(t, 32, p.HeaderLen(), "payload %q pad %d hdr %d op %v", p.Payload(), p.PadCount(), p.HeaderLen(), p.Opcode())
	assert.Equal(t, RCRDMAWriteOnlyWithImmediate, p.Opcode(), "payload %q pad %d hdr %d op %v", p.Payload(), p.PadCount(), p.HeaderLen(), p.Opcode())
	assert.Equal(t, uint32(0xA1B2C3D4), p.RETH().RKey(), "views wrong")
	assert.Equal(t, uint32(0xDEADBEEF), p.ImmDt().ImmediateData(), "views wrong")
	assert.Nil(t, p.AETH(), "views wrong")
	assert.Nil(t, p.DETH(), "views wrong")
	assert.Equal(t, RETHSize, cap(p.RETH()), "views not capacity-clipped")
	assert.Equal(t, len(payload), cap(p.Payload()), "views not capacity-clipped")
	assert.Equal(t, BTHSize, cap(p.BTH()), "views not capacity-clipped")
	var got Headers
	p.Headers(&got)
	h.BTH.PadCount = 3
	assert.Equal(t, h, got, "Headers:\n%+v\nwant\n%+v", got, h)
}

func TestGoldenRoundTripAndTruncation(t *testing.T) {
	for _, g := range golden(t) {
		var p Parsed
		require.NoError(t, Parse(g.pkt, &p), "frame %d", g.frame)
		var h Headers
		p.Headers(&h)
		b, err := AppendPacket(nil, &h, p.Payload())
		require.NoError(t, err, "frame %d: AppendPacket", g.frame)
		copy(b[len(b)-ICRCSize:], g.pkt[len(g.pkt)-ICRCSize:])
		require.Equal(t, g.pkt, b, "frame %d: round trip differs\n got % x\nwant % x", g.frame, b, g.pkt)
		// The views' Fields/Encode pairs must be exact inverses too.
		bth := make(BTH, BTHSize)
		f := p.BTH().Fields()
		bth.Encode(&f)
		require.Equal(t, p.BTH(), bth, "frame %d: BTH round trip % x != % x", g.frame, bth, p.BTH())
		// Prefixes that cut into the headers or the ICRC are structurally
		// invalid; longer ones can look like a shorter packet and are left to
		// the ICRC (TestGoldenPrefixesFailICRC).
		for i := range p.HeaderLen() + ICRCSize {
			require.Error(t, Parse(g.pkt[:i], &p), "frame %d: %d-byte prefix parsed", g.frame, i)
		}
	}
}

func TestParseAllocs(t *testing.T) {
	g := golden(t)
	var p Parsed
	var sink int
	allocs := testing.AllocsPerRun(100, func() {
		for i := range g[:64] {
			if Parse(g[i].pkt, &p) == nil {
				sink += len(p.Payload()) + int(p.BTH().PSN())
			}
		}
	})
	assert.Equal(t, float64(0), allocs, "Parse allocates %v times per run", allocs)
	_ = sink
}

func TestAppendPacketErrors(t *testing.T) {
	dst := []byte{9}
	cases := []struct {
		op      Opcode
		payload []byte
		want    error
	}{
		{0x15, nil, ErrUnknownOpcode},
		{RCAcknowledge, []byte{1}, ErrUnexpectedPayload},
		{RCRDMAReadRequest, []byte{1}, ErrUnexpectedPayload},
		{RCAtomicWrite, make([]byte, 7), ErrBadPayloadLength},
		{CNP, nil, ErrBadPayloadLength},
	}
	_, err := AppendPacket(dst, &Headers{BTH: BTHFields{Opcode: RCSendOnly, TransportVersion: 1}}, nil)
	assert.ErrorIs(t, err, ErrBadTransportVersion, "TVer 1: %v", err)
	for _, c := range cases {
		got, err := AppendPacket(dst, &Headers{BTH: BTHFields{Opcode: c.op}}, c.payload)
		assert.ErrorIs(t, err, c.want, "%v: got %v (% x), want %v", c.op, err, got, c.want)
		assert.Equal(t, dst, got, "%v: got %v (% x), want %v", c.op, err, got, c.want)
	}
	// Every valid opcode builds a packet that parses, with every payload
	// length's pad.
	for i := 0; i < 256; i++ {
		op := Opcode(i)
		if !op.Valid() {
			continue
		}
		for _, n := range []int{0, 1, 2, 3, 4, 5, 8, 16} {
			if !op.HasPayload() && n != 0 || op.FixedPayloadLen() != 0 && n != op.FixedPayloadLen() {
				continue
			}
			b, err := AppendPacket(dst, &Headers{BTH: BTHFields{Opcode: op}}, bytes.Repeat([]byte{0xAB}, n))
			require.NoError(t, err, "%v/%d", op, n)
			require.Equal(t, PacketLen(op, n), len(b)-1, "%v/%d: length %d, want %d", op, n, len(b)-1, PacketLen(op, n))
			require.Equal(t, byte(9), b[0], "%v/%d: length %d, want %d", op, n, len(b)-1, PacketLen(op, n))
			var p Parsed
			if err := Parse(b[1:], &p); err != nil || len(p.Payload()) != n || p.PadCount() != -n&3 {
				require.Fail(t, fmt.Sprintf("%v/%d: Parse %v, payload %d, pad %d", op, n, err, len(p.Payload()), p.PadCount()))
			}
		}
	}
}
