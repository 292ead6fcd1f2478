package packet

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const top = PSNMask // 2^24 - 1

func TestPSNArithmetic(t *testing.T) {
	add := []struct {
		p    PSN
		n    uint32
		want PSN
	}{
		/* 0 */ {0, 1, 1},
		/* 1 */ {top, 1, 0},
		/* 2 */ {top - 1, 3, 1},
		/* 3 */ {5, 1 << 24, 5},
		/* 4 */ {top, top, top - 1},
	}
	for i, c := range add {
		got := c.p.Add(c.n)
		assert.Equal(t, c.want, got, "%d: %#x.Add(%#x) = %#x, want %#x", i, c.p, c.n, got, c.want)
		got = c.want.Sub(c.n)
		assert.Equal(t, c.p&PSNMask, got, "%d: %#x.Sub(%#x) = %#x, want %#x", i, c.want, c.n, got, c.p)
	}
	diff := []struct {
		p, q PSN
		want int32
	}{
		/* 0 */ {0, 0, 0},
		/* 1 */ {1, 0, 1},
		/* 2 */ {0, 1, -1},
		/* 3 */ {0, top, 1},
		/* 4 */ {top, 0, -1},
		/* 5 */ {2, top - 1, 4},
		/* 6 */ {1 << 23, 0, -(1 << 23)}, // exactly half: the negative side
		/* 7 */ {1<<23 - 1, 0, 1<<23 - 1},
		/* 8 */ {0, 1<<23 - 1, -(1<<23 - 1)},
		/* 9 */ {top, top - 100, 100},
		/* 10 */ {0x000010, 0xFFFFF0, 0x20},
	}
	for i, c := range diff {
		got := c.p.Diff(c.q)
		assert.Equal(t, c.want, got, "%d: %#x.Diff(%#x) = %d, want %d", i, c.p, c.q, got, c.want)
		if got := c.p.LessThan(c.q); got != (c.want < 0) {
			assert.Fail(t, fmt.Sprintf("%d: %#x.LessThan(%#x) = %v", i, c.p, c.q, got))
		}
		if got := c.p.LessThanEq(c.q); got != (c.want <= 0) {
			assert.Fail(t, fmt.Sprintf("%d: %#x.LessThanEq(%#x) = %v", i, c.p, c.q, got))
		}
	}
}

func TestPSNInWindow(t *testing.T) {
	cases := []struct {
		p, first PSN
		size     uint32
		want     bool
	}{
		/* 0 */ {0, 0, 0, false},
		/* 1 */ {0, 0, 1, true},
		/* 2 */ {1, 0, 1, false},
		/* 3 */ {top, top, 2, true},
		/* 4 */ {0, top, 2, true},
		/* 5 */ {1, top, 2, false},
		/* 6 */ {top - 1, top, 2, false},
		/* 7 */ {4, top - 10, 16, true},
		/* 8 */ {5, top - 10, 16, false},
		/* 9 */ {0, 1, 1 << 24, false}, // clamped to half the space
		/* 10 */ {1<<23 - 1, 0, 1 << 30, true},
		/* 11 */ {1 << 23, 0, 1 << 30, false},
	}
	for i, c := range cases {
		got := c.p.InWindow(c.first, c.size)
		assert.Equal(t, c.want, got, "%d: %#x.InWindow(%#x, %d) = %v, want %v", i, c.p, c.first, c.size, got, c.want)
	}
	assert.True(t, PSN(top).Valid(), "Valid")
	assert.False(t, PSN(top+1).Valid(), "Valid")
}

func TestBTHSetters(t *testing.T) {
	b := make(BTH, BTHSize)
	b.Encode(&BTHFields{Opcode: RCSendFirst, PKey: 0xFFFF, DestQP: 0xABCDEF, FECN: true, PSN: 1})
	b.SetOpcode(RCSendLast)
	b.SetPadCount(2)
	b.SetAckReq(true)
	b.SetPSN(top)
	b.SetSolicitedEvent(true)
	want := BTHFields{Opcode: RCSendLast, SolicitedEvent: true, PadCount: 2, PKey: 0xFFFF, DestQP: 0xABCDEF, FECN: true, AckReq: true, PSN: top}
	got := b.Fields()
	require.Equal(t, want, got, "got %+v\nwant %+v", got, want)
	b.SetPSN(0x1234567) // wider than 24 bits: truncated, AckReq kept
	b.SetAckReq(false)
	b.SetBECN(true)
	b.SetFECN(false)
	b.SetDestQP(0x1000001)
	b.SetPadCount(7)
	b.SetOpcode(UDSendOnly)
	want = BTHFields{Opcode: UDSendOnly, SolicitedEvent: true, PadCount: 3, PKey: 0xFFFF, DestQP: 1, BECN: true, PSN: 0x234567}
	got = b.Fields()
	require.Equal(t, want, got, "got %+v\nwant %+v", got, want)
	b.SetAckReq(true)
	require.Equal(t, PSN(0x234567), b.PSN(), "SetAckReq disturbed the PSN")
	require.True(t, b.AckReq(), "SetAckReq disturbed the PSN")
}
