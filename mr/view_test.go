package mr

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestViewMatchesGather walks an SGE list in packet-sized steps: where a step lies in one SGE,
// View returns the registered bytes themselves (what Gather would copy) and advances as Gather
// would; where it crosses SGEs, View declines and leaves the cursor for Gather.
func TestViewMatchesGather(t *testing.T) {
	e := newEnv(t)
	sges, read := sgeFixture(t, e, AccessLocalWrite)
	var c Cursor
	c.Reset(sges)
	require.NoError(t, e.t.Scatter(&c, e.pd, pattern(make([]byte, c.Len()), 9)))
	want := read()
	for _, mtu := range []int{256, 1024, 4096} {
		c.Reset(sges)
		var got []byte
		views, copies := 0, 0
		for c.Remaining() > 0 {
			n := int(min(uint64(mtu), c.Remaining()))
			before := c
			v, ok, err := e.t.View(&c, e.pd, n)
			require.NoError(t, err)
			if !ok {
				require.Equal(t, before, c, "a declined view moves nothing")
				p := make([]byte, n)
				require.NoError(t, e.t.Gather(p, &c, e.pd))
				got = append(got, p...)
				copies++
				continue
			}
			require.Len(t, v, n)
			g := before
			p := make([]byte, n)
			require.NoError(t, e.t.Gather(p, &g, e.pd))
			require.Equal(t, p, v)
			require.Equal(t, g, c, "a view advances as a gather does")
			got = append(got, v...)
			views++
		}
		require.True(t, bytes.Equal(want, got), "mtu %d", mtu)
		assert.Positive(t, views, "mtu %d", mtu)
		assert.Positive(t, copies, "mtu %d: some steps cross SGEs", mtu)
	}

	// A view is the registered memory itself, not a copy of it.
	buf := make([]byte, 8192)
	m := e.reg(t, buf, 0)
	c.Reset([]SGE{{Addr: uint64(addrOf(buf)), Length: 8192, LKey: m.LKey()}})
	v, ok, err := e.t.View(&c, e.pd, 8192)
	require.NoError(t, err)
	require.True(t, ok, "one buffer's pages are adjacent")
	buf[5000] = 0x77
	assert.Equal(t, byte(0x77), v[5000])

	// Errors are Gather's; too long is ErrLength.
	c.Reset([]SGE{{Addr: uint64(addrOf(buf)), Length: 100, LKey: m.LKey() ^ 0xFF}})
	_, _, err = e.t.View(&c, e.pd, 100)
	require.Error(t, err)
	require.ErrorIs(t, err, e.t.Gather(make([]byte, 100), &c, e.pd))
	c.Reset([]SGE{{Addr: uint64(addrOf(buf)), Length: 100, LKey: m.LKey()}})
	_, _, err = e.t.View(&c, e.pd, 101)
	require.ErrorIs(t, err, ErrLength)
}

// TestViewDeclinesFastReg: a fast-registration region's pages are the program's to swap and
// invalidate, so its bytes are always copied.
func TestViewDeclinesFastReg(t *testing.T) {
	e := newEnv(t)
	m, err := e.t.AllocMR(e.pd, 4)
	require.NoError(t, err)
	k := IncKey(m.LKey())
	require.NoError(t, e.t.RegFast(e.pd, &FastReg{Key: k, Access: AccessLocalWrite, IOVA: 0x10000,
		Length: 4096, PageSize: 4096, Pages: pages(1, 4096)}))
	var c Cursor
	c.Reset([]SGE{{Addr: 0x10000, Length: 4096, LKey: k}})
	_, ok, err := e.t.View(&c, e.pd, 4096)
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Zero(t, c.Pos())
}
