package packet

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// randomHeaders fills every field of h with random in-range values.
func randomHeaders(r *rand.Rand, op Opcode) Headers {
	return Headers{
		BTH: BTHFields{
			Opcode: op, SolicitedEvent: r.Intn(2) == 1, MigReq: r.Intn(2) == 1, PKey: uint16(r.Uint32()),
			FECN: r.Intn(2) == 1, BECN: r.Intn(2) == 1, DestQP: r.Uint32() & QPNMask, AckReq: r.Intn(2) == 1,
			PSN: PSN(r.Uint32() & PSNMask),
		},
		RDETH:        RDETHFields{EEContext: r.Uint32() & QPNMask},
		DETH:         DETHFields{QKey: r.Uint32(), SrcQP: r.Uint32() & QPNMask},
		FETH:         FETHFields{PlacementType: uint8(r.Intn(16)), Selectivity: uint8(r.Intn(4))},
		RETH:         RETHFields{VirtualAddress: r.Uint64(), RKey: r.Uint32(), DMALength: r.Uint32()},
		AtomicETH:    AtomicETHFields{VirtualAddress: r.Uint64(), RKey: r.Uint32(), SwapAddData: r.Uint64(), CompareData: r.Uint64()},
		AETH:         AETHFields{Syndrome: Syndrome(r.Intn(128)), MSN: r.Uint32() & 0xFFFFFF},
		AtomicAckETH: AtomicAckETHFields{OriginalRemoteData: r.Uint64()},
		ImmDt:        ImmDtFields{ImmediateData: r.Uint32()},
		IETH:         IETHFields{RKey: r.Uint32()},
	}
}

// keepOnly zeroes the extension headers op does not carry, as Parsed.Headers
// does.
func keepOnly(h Headers, op Opcode) Headers {
	hs := op.Headers()
	out := Headers{BTH: h.BTH}
	if hs.Has(HeaderRDETH) {
		out.RDETH = h.RDETH
	}
	if hs.Has(HeaderDETH) {
		out.DETH = h.DETH
	}
	if hs.Has(HeaderFETH) {
		out.FETH = h.FETH
	}
	if hs.Has(HeaderRETH) {
		out.RETH = h.RETH
	}
	if hs.Has(HeaderAtomicETH) {
		out.AtomicETH = h.AtomicETH
	}
	if hs.Has(HeaderAETH) {
		out.AETH = h.AETH
	}
	if hs.Has(HeaderAtomicAckETH) {
		out.AtomicAckETH = h.AtomicAckETH
	}
	if hs.Has(HeaderImmDt) {
		out.ImmDt = h.ImmDt
	}
	if hs.Has(HeaderIETH) {
		out.IETH = h.IETH
	}
	return out
}

func TestHeadersRoundTripEveryOpcode(t *testing.T) {
	r := rand.New(rand.NewSource(42))
	for i := 0; i < 256; i++ {
		op := Opcode(i)
		if !op.Valid() {
			continue
		}
		for range 50 {
			h := randomHeaders(r, op)
			n := op.FixedPayloadLen()
			if n == 0 && op.HasPayload() {
				n = r.Intn(64)
			}
			payload := make([]byte, n)
			r.Read(payload)
			b := mustAppend(t, &h, payload)
			var p Parsed
			require.NoError(t, Parse(b, &p), "%v", op)
			var got Headers
			p.Headers(&got)
			want := keepOnly(h, op)
			want.BTH.PadCount = uint8(-n & 3)
			require.Equal(t, want, got, "%v:\n got %+v\nwant %+v", op, got, want)
		}
	}
}

func TestSyndrome(t *testing.T) {
	cases := []struct {
		s     Syndrome
		typ   SyndromeType
		value uint8
		name  string
		isACK bool
	}{
		{SyndromeACKUnlimited, SyndromeTypeACK, 0x1F, "ACK", true},
		{SyndromeACK(3), SyndromeTypeACK, 3, "ACK(credits=0x03)", true},
		{SyndromeRNRNAK(14), SyndromeTypeRNRNAK, 14, "RNR_NAK(timer=0x0e)", false},
		{SyndromeRNRNAK(0xFF), SyndromeTypeRNRNAK, 0x1F, "RNR_NAK(timer=0x1f)", false},
		{SyndromeNAKPSNSequenceError, SyndromeTypeNAK, 0, "NAK_PSN_SEQUENCE_ERROR", false},
		{SyndromeNAKInvalidRequest, SyndromeTypeNAK, 1, "NAK_INVALID_REQUEST", false},
		{SyndromeNAKRemoteAccessError, SyndromeTypeNAK, 2, "NAK_REMOTE_ACCESS_ERROR", false},
		{SyndromeNAKRemoteOperationalError, SyndromeTypeNAK, 3, "NAK_REMOTE_OPERATIONAL_ERROR", false},
		{SyndromeNAKInvalidRDRequest, SyndromeTypeNAK, 4, "NAK_INVALID_RD_REQUEST", false},
		{0x65, SyndromeTypeNAK, 5, "NAK(code=0x05)", false},
		{0x41, SyndromeTypeReserved, 1, "RESERVED_SYNDROME(0x01)", false},
	}
	for i, c := range cases {
		assert.Equal(t, c.typ, c.s.Type(), "%d: %#x: type %#x value %d %q ack %v", i, uint8(c.s), c.s.Type(), c.s.Value(), c.s.String(), c.s.IsACK())
		assert.Equal(t, c.value, c.s.Value(), "%d: %#x: type %#x value %d %q ack %v", i, uint8(c.s), c.s.Type(), c.s.Value(), c.s.String(), c.s.IsACK())
		assert.Equal(t, c.name, c.s.String(), "%d: %#x: type %#x value %d %q ack %v", i, uint8(c.s), c.s.Type(), c.s.Value(), c.s.String(), c.s.IsACK())
		assert.Equal(t, c.isACK, c.s.IsACK(), "%d: %#x: type %#x value %d %q ack %v", i, uint8(c.s), c.s.Type(), c.s.Value(), c.s.String(), c.s.IsACK())
	}
	a := make(AETH, AETHSize)
	a.Encode(&AETHFields{Syndrome: SyndromeNAKRemoteAccessError, MSN: 0x1ABCDEF})
	a.SetMSN(a.MSN() + 1)
	assert.Equal(t, SyndromeNAKRemoteAccessError, a.Syndrome(), "AETH % x", a)
	assert.Equal(t, uint32(0xABCDF0), a.MSN(), "AETH % x", a)
	a.SetSyndrome(SyndromeACKUnlimited)
	assert.Equal(t, byte(0x1F), a[0], "AETH % x", a)
	assert.Equal(t, uint32(0xABCDF0), a.MSN(), "AETH % x", a)
}

func TestStrings(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Kind(99).String(), "INVALID"},
		{KindRDMAReadResponse.String(), "RDMA_READ_RESPONSE"},
		{PositionMiddle.String(), "MIDDLE"},
		{Position(9).String(), "INVALID"},
		{TransportUD.String(), "UD"},
		{Transport(0xA0).String(), "Transport(0xa0)"},
		{UDSendOnlyWithImmediate.String(), "UD_SEND_ONLY_WITH_IMMEDIATE"},
		{RCRDMAReadResponseMiddle.String(), "RC_RDMA_READ_RESPONSE_MIDDLE"},
		{Opcode(0x15).String(), "Opcode(0x15)"},
	} {
		assert.Equal(t, c.want, c.got, "got %q, want %q", c.got, c.want)
	}
}
