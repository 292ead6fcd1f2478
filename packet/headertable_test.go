package packet

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHeaderTableMatchesViews reads random bytes through every field of the
// table and through the header's view type: the offsets and widths of the
// table must name exactly the bits the accessors read.
func TestHeaderTableMatchesViews(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	views := map[Header]func(b []byte) map[string]uint64{
		HeaderRDETH: func(b []byte) map[string]uint64 { return map[string]uint64{"eecontext": uint64(RDETH(b).EEContext())} },
		HeaderDETH: func(b []byte) map[string]uint64 {
			return map[string]uint64{"qkey": uint64(DETH(b).QKey()), "srcqp": uint64(DETH(b).SrcQP())}
		},
		HeaderFETH: func(b []byte) map[string]uint64 {
			return map[string]uint64{"placement": uint64(FETH(b).PlacementType()), "selectivity": uint64(FETH(b).Selectivity())}
		},
		HeaderRETH: func(b []byte) map[string]uint64 {
			v := RETH(b)
			return map[string]uint64{"va": v.VirtualAddress(), "rkey": uint64(v.RKey()), "dmalen": uint64(v.DMALength())}
		},
		HeaderAtomicETH: func(b []byte) map[string]uint64 {
			v := AtomicETH(b)
			return map[string]uint64{"va": v.VirtualAddress(), "rkey": uint64(v.RKey()), "swap": v.SwapAddData(), "compare": v.CompareData()}
		},
		HeaderAETH: func(b []byte) map[string]uint64 {
			return map[string]uint64{"syndrome": uint64(AETH(b).Syndrome()), "msn": uint64(AETH(b).MSN())}
		},
		HeaderAtomicAckETH: func(b []byte) map[string]uint64 {
			return map[string]uint64{"orig": AtomicAckETH(b).OriginalRemoteData()}
		},
		HeaderImmDt: func(b []byte) map[string]uint64 { return map[string]uint64{"immdt": uint64(ImmDt(b).ImmediateData())} },
		HeaderIETH:  func(b []byte) map[string]uint64 { return map[string]uint64{"ieth": uint64(IETH(b).RKey())} },
	}
	require.Len(t, views, NumHeaders, "every header needs its view in this test")
	for h := range Header(NumHeaders) {
		d := h.Desc()
		require.NotNil(t, d, "%v", h)
		assert.Equal(t, h.String(), d.Name)
		for range 100 {
			b := make([]byte, d.Size)
			rnd.Read(b)
			want := views[h](b)
			got := map[string]uint64{}
			for _, f := range d.Fields {
				got[f.Key] = f.Value(b)
			}
			require.Equal(t, want, got, "%v % x", h, b)
		}
	}
	assert.Nil(t, Header(NumHeaders).Desc())
}

// TestHeaderTableRows checks what the dump and the layers rely on: sizes
// that match the view constants, fields inside their header, distinct JSON
// keys, and a distinct place in JSON records for every header.
func TestHeaderTableRows(t *testing.T) {
	sizes := map[Header]int{HeaderRDETH: RDETHSize, HeaderDETH: DETHSize, HeaderFETH: FETHSize, HeaderRETH: RETHSize,
		HeaderAtomicETH: AtomicETHSize, HeaderAETH: AETHSize, HeaderAtomicAckETH: AtomicAckETHSize, HeaderImmDt: ImmDtSize, HeaderIETH: IETHSize}
	order := map[uint8]Header{}
	for h := range Header(NumHeaders) {
		d := h.Desc()
		assert.Equal(t, sizes[h], d.Size, "%v", h)
		assert.Equal(t, sizes[h], h.Size(), "%v", h)
		require.NotEmpty(t, d.Fields, "%v", h)
		assert.NotEmpty(t, d.Title, "%v", h)
		if d.Scalar {
			assert.Len(t, d.Fields, 1, "%v: a scalar header has one field", h)
		}
		prev, dup := order[d.RecordOrder]
		assert.False(t, dup, "%v and %v share RecordOrder %d", h, prev, d.RecordOrder)
		order[d.RecordOrder] = h
		keys := map[string]bool{}
		for _, f := range d.Fields {
			assert.False(t, keys[f.Key], "%v: duplicate key %q", h, f.Key)
			keys[f.Key] = true
			assert.NotEmpty(t, f.Name)
			assert.NotEmpty(t, f.Doc)
			assert.True(t, f.Width >= 1 && f.Width <= 64, "%v %s width %d", h, f.Name, f.Width)
			assert.LessOrEqual(t, int(f.Bit)+int(f.Width), 8*d.Size, "%v %s ends past the header", h, f.Name)
		}
	}
}

func TestFieldValueAndVariants(t *testing.T) {
	for _, tc := range []struct {
		name  string
		f     Field
		b     []byte
		value uint64
	}{
		{"aligned 64-bit", Field{Bit: 0, Width: 64}, []byte{1, 2, 3, 4, 5, 6, 7, 8}, 0x0102030405060708},
		{"24 bits after a byte", Field{Bit: 8, Width: 24}, []byte{0xff, 0x12, 0x34, 0x56}, 0x123456},
		{"low nibble", Field{Bit: 28, Width: 4}, []byte{0xff, 0xff, 0xff, 0xa5}, 0x5},
		{"two bits mid-byte", Field{Bit: 26, Width: 2}, []byte{0, 0, 0, 0x30}, 3},
		{"bits across bytes", Field{Bit: 6, Width: 4}, []byte{0x03, 0xc0}, 0xf},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.value, tc.f.Value(tc.b))
		})
	}

	swap := HeaderAtomicETH.Desc().Fields[2]
	assert.Equal(t, "Swap Data", swap.For(KindCompareSwap).Name)
	assert.Equal(t, "swap", swap.For(KindCompareSwap).Abbrev)
	fa := swap.For(KindFetchAdd)
	assert.Equal(t, []string{"Swap (Add) Data", "add", "the value FETCH_ADD adds to the target"}, []string{fa.Name, fa.Abbrev, fa.Doc})

	qkey := HeaderDETH.Desc().Fields[0]
	assert.Contains(t, qkey.Meaning(GSIQKey), "QP1")
	assert.Equal(t, qkey.Doc, qkey.Meaning(0x1234))
}

// TestParseAndHeadersAllocationFree guards the table-driven Parse, Headers
// and AppendPacket: walking the table must cost no allocation, and must not
// make a caller's Headers escape to the heap, which is where the transport
// keeps them. The Parsed and Headers live inside the measured function so
// that an escape shows up as an allocation.
func TestParseAndHeadersAllocationFree(t *testing.T) {
	h := Headers{BTH: BTHFields{Opcode: RCAtomicAcknowledge, PKey: 0xffff}}
	pkt, err := AppendPacket(nil, &h, nil)
	require.NoError(t, err)
	buf := make([]byte, 0, 2*len(pkt))
	allocs := testing.AllocsPerRun(100, func() {
		var p Parsed
		var out Headers
		if err := Parse(pkt, &p); err != nil {
			panic(err)
		}
		p.Headers(&out)
		if _, err := AppendPacket(buf[:0], &out, nil); err != nil {
			panic(err)
		}
	})
	assert.Zero(t, allocs)
}
