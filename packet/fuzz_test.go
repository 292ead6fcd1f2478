package packet

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

// addGoldenSeeds adds one captured packet per opcode (the first of each) as
// a seed, so the fuzzer starts from real rxe traffic of every kind.
func addGoldenSeeds(f *testing.F, add func(pkt []byte)) {
	seen := map[byte]bool{}
	for _, g := range golden(f) {
		if !seen[g.pkt[0]] {
			seen[g.pkt[0]] = true
			add(g.pkt)
		}
	}
}

func FuzzParse(f *testing.F) {
	addGoldenSeeds(f, func(pkt []byte) { f.Add(pkt) })
	// Built packets of the opcodes the capture lacks.
	for _, op := range []Opcode{RCFlush, RCAtomicWrite, RCSendOnlyWithInvalidate, UDSendOnlyWithImmediate, CNP, 0x4B} {
		b, err := AppendPacket(nil, &Headers{BTH: BTHFields{Opcode: op}}, make([]byte, op.FixedPayloadLen()))
		require.NoError(f, err)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var p Parsed
		if err := Parse(b, &p); err != nil {
			require.False(t, !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrUnknownOpcode) && !errors.Is(err, ErrBadTransportVersion) &&
				!errors.Is(err, ErrBadPad) && !errors.Is(err, ErrUnexpectedPayload) && !errors.Is(err, ErrBadPayloadLength), "unexpected error %v", err)
			return
		}
		require.Equal(t, len(b), p.HeaderLen()+len(p.Payload())+p.PadCount()+ICRCSize, "lengths do not add up: %d+%d+%d+4 != %d", p.HeaderLen(), len(p.Payload()), p.PadCount(), len(b))
		// Re-encoding the decoded headers gives a packet that decodes the same
		// (reserved bits of the input are not preserved, by design).
		var h, h2 Headers
		p.Headers(&h)
		out, err := AppendPacket(nil, &h, p.Payload())
		require.NoError(t, err, "AppendPacket of a parsed packet")
		var p2 Parsed
		require.NoError(t, Parse(out, &p2), "re-encoded packet does not parse")
		p2.Headers(&h2)
		require.Equal(t, h2, h, "re-encoded packet decodes differently:\n%+v\n%+v", h, h2)
		require.Equal(t, p2.Payload(), p.Payload(), "re-encoded packet decodes differently:\n%+v\n%+v", h, h2)
	})
}

func FuzzVerifyICRC(f *testing.F) {
	addGoldenSeeds(f, func(pkt []byte) {
		f.Add(pkt, uint16(0xFECE), uint8(IPv4DontFragment), false)
		f.Add(pkt, uint16(0), uint8(0), true)
	})
	f.Add([]byte{}, uint16(1), uint8(7), false)
	src4, dst4 := netip.MustParseAddrPort("10.99.0.3:49441"), netip.MustParseAddrPort("10.99.0.2:4791")
	src6, dst6 := netip.MustParseAddrPort("[fd00::3]:49441"), netip.MustParseAddrPort("[fd00::2]:4791")
	f.Fuzz(func(t *testing.T, b []byte, id uint16, flags uint8, v6 bool) {
		env := Envelope{Src: src4, Dst: dst4, IPID: id, IPFlags: IPv4Flags(flags)}
		if v6 {
			env.Src, env.Dst = src6, dst6
		}
		// Arbitrary input: no panic, only the documented errors.
		if err := env.VerifyICRC(b); err != nil && !errors.Is(err, ErrBadICRC) && !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrTooLong) {
			require.Fail(t, fmt.Sprintf("VerifyICRC: %v", err))
		}
		if _, _, err := VerifyICRCIPv4AnyID(src4, dst4, b); err != nil && !errors.Is(err, ErrBadICRC) && !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrTooLong) {
			require.Fail(t, fmt.Sprintf("VerifyICRCIPv4AnyID: %v", err))
		}
		// With a correct ICRC both verifiers accept, and the any-ID one finds
		// the ID and flags (the reserved flag bit is not solved for).
		c := bytes.Clone(b)
		if env.PutICRC(c) != nil {
			return
		}
		require.NoError(t, env.VerifyICRC(c), "VerifyICRC after PutICRC")
		// The same packet in three pieces, split where id says, gets the same ICRC.
		a := BTHSize + int(id&0xFF)%(len(c)-BTHSize-ICRCSize+1)
		z := a + int(id>>8)%(len(c)-ICRCSize-a+1)
		head, payload, tail := bytes.Clone(c[:a]), bytes.Clone(c[a:z]), make([]byte, len(c)-z)
		copy(tail, c[z:len(c)-ICRCSize])
		require.NoError(t, env.PutICRCParts(head, payload, tail))
		require.Equal(t, c[len(c)-ICRCSize:], tail[len(tail)-ICRCSize:], "ICRC in pieces split at %d and %d", a, z)
		if v6 || flags&4 != 0 {
			return
		}
		gotID, gotFlags, err := VerifyICRCIPv4AnyID(src4, dst4, c)
		require.NoError(t, err, "any-ID: got %#x/%d %v, want %#x/%d", gotID, gotFlags, err, id, flags&3)
		require.Equal(t, id, gotID, "any-ID: got %#x/%d %v, want %#x/%d", gotID, gotFlags, err, id, flags&3)
		require.Equal(t, IPv4Flags(flags&3), gotFlags, "any-ID: got %#x/%d %v, want %#x/%d", gotID, gotFlags, err, id, flags&3)
		// Expecting the right ID, or another, finds the same.
		for _, near := range []uint16{id, id + uint16(len(b))} {
			gotID, gotFlags, err = VerifyICRCIPv4AnyIDNear(src4, dst4, c, near)
			require.NoError(t, err, "near %#x: got %#x/%d %v, want %#x/%d", near, gotID, gotFlags, err, id, flags&3)
			require.Equal(t, id, gotID, "near %#x: got %#x/%d %v, want %#x/%d", near, gotID, gotFlags, err, id, flags&3)
			require.Equal(t, IPv4Flags(flags&3), gotFlags, "near %#x: got %#x/%d %v, want %#x/%d", near, gotID, gotFlags, err, id, flags&3)
		}
	})
}
