package mr

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// sgeFixture registers a few buffers and builds an SGE list over pieces of them, including empty
// SGEs, returning the list and a function reading back the list's bytes in order.
func sgeFixture(t *testing.T, e env, access Access) ([]SGE, func() []byte) {
	bufs := [][]byte{make([]byte, 10000), make([]byte, 300), make([]byte, 9000)}
	var keys []uint32
	for _, b := range bufs {
		keys = append(keys, e.reg(t, b, access).LKey())
	}
	at := func(i, off int) uint64 { return uint64(addrOf(bufs[i])) + uint64(off) }
	sges := []SGE{
		{Addr: at(0, 4000), Length: 5000, LKey: keys[0]},
		{Addr: 0, Length: 0, LKey: 0xdead}, // empty: not checked
		{Addr: at(1, 0), Length: 300, LKey: keys[1]},
		{Addr: at(2, 1), Length: 8999, LKey: keys[2]},
		{Addr: at(0, 0), Length: 17, LKey: keys[0]},
		{Addr: 0, Length: 0, LKey: 0},
	}
	read := func() []byte {
		return bytes.Join([][]byte{bufs[0][4000:9000], bufs[1], bufs[2][1:], bufs[0][:17]}, nil)
	}
	return sges, read
}

func TestScatterAcrossPackets(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	e := newEnv(t)
	sges, read := sgeFixture(t, e, AccessLocalWrite)
	total, err := e.t.ValidateSGEs(e.pd, AccessLocalWrite, sges)
	require.NoError(t, err)
	require.Equal(t, uint64(5000+300+8999+17), total)
	require.Equal(t, total, SGEsLength(sges))
	for _, mtu := range []int{256, 1024, 4096, 1 + rng.IntN(5000)} {
		msg := make([]byte, total-uint64(rng.IntN(100)))
		_, _ = rand.NewChaCha8([32]byte{byte(mtu)}).Read(msg)
		var c Cursor
		c.Reset(sges)
		require.Equal(t, total, c.Len())
		for rest := msg; len(rest) > 0; {
			n := min(mtu, len(rest))
			require.NoError(t, e.t.Scatter(&c, e.pd, rest[:n]))
			rest = rest[n:]
		}
		require.Equal(t, uint64(len(msg)), c.Pos())
		require.True(t, bytes.Equal(msg, read()[:len(msg)]), "scattered bytes differ, mtu %d", mtu)
		require.ErrorIs(t, e.t.Scatter(&c, e.pd, make([]byte, c.Remaining()+1)), ErrLength)
	}
}

func TestGatherAndSeek(t *testing.T) {
	e := newEnv(t)
	sges, read := sgeFixture(t, e, AccessLocalWrite)
	var c Cursor
	c.Reset(sges)
	require.NoError(t, e.t.Scatter(&c, e.pd, pattern(make([]byte, c.Len()), 5)))
	want := read()
	for _, mtu := range []int{1, 300, 1024, 4096} {
		c.Reset(sges)
		var got []byte
		for c.Remaining() > 0 {
			p := make([]byte, min(uint64(mtu), c.Remaining()))
			require.NoError(t, e.t.Gather(p, &c, e.pd))
			got = append(got, p...)
		}
		require.True(t, bytes.Equal(want, got), "gathered bytes differ, mtu %d", mtu)
	}
	// Resend from an arbitrary position, as after a NAK.
	for _, pos := range []uint64{0, 4999, 5000, 5300, 5301, c.Len() - 1, c.Len()} {
		require.NoError(t, c.Seek(pos))
		require.Equal(t, pos, c.Pos())
		p := make([]byte, c.Remaining())
		require.NoError(t, e.t.Gather(p, &c, e.pd))
		require.True(t, bytes.Equal(want[pos:], p), "after seek %d", pos)
	}
	require.ErrorIs(t, c.Seek(c.Len()+1), ErrLength)
	require.ErrorIs(t, e.t.Gather(make([]byte, 1), &c, e.pd), ErrLength)
	var empty Cursor
	require.NoError(t, e.t.Gather(nil, &empty, e.pd))
	require.ErrorIs(t, e.t.Scatter(&empty, e.pd, []byte{1}), ErrLength)
}

func TestSGEChecks(t *testing.T) {
	e := newEnv(t)
	sges, _ := sgeFixture(t, e, AccessRemoteRead) // no local write
	_, err := e.t.ValidateSGEs(e.pd, 0, sges)
	require.NoError(t, err)
	_, err = e.t.ValidateSGEs(e.pd, AccessLocalWrite, sges)
	require.ErrorIs(t, err, ErrAccessDenied)
	var c Cursor
	c.Reset(sges)
	require.ErrorIs(t, e.t.Scatter(&c, e.pd, []byte{1}), ErrAccessDenied)
	require.Equal(t, uint64(0), c.Pos())
	require.NoError(t, e.t.Gather(make([]byte, 10), &c, e.pd))

	bad := append([]SGE(nil), sges...)
	bad[3].Length++ // one byte past its region
	_, err = e.t.ValidateSGEs(e.pd, 0, bad)
	require.ErrorIs(t, err, ErrOutOfRange)
	c.Reset(bad)
	require.NoError(t, c.Seek(5300))
	require.ErrorIs(t, e.t.Gather(make([]byte, 9000), &c, e.pd), ErrOutOfRange)
	bad[3].LKey = IncKey(bad[3].LKey)
	_, err = e.t.ValidateSGEs(e.pd, 0, bad)
	require.ErrorIs(t, err, ErrKeyInvalid)
	other, _ := e.t.AllocPD()
	_, err = e.t.ValidateSGEs(other, 0, sges)
	require.ErrorIs(t, err, ErrPDMismatch)
}
