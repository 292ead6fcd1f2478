package gorxe

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPDAndMRLifecycle(t *testing.T) {
	d := newTestFabric(t).open(t, "10.0.0.1")
	pd, err := d.AllocPD()
	require.NoError(t, err)
	assert.Same(t, d, pd.Device(), "PD.Device")
	buf := make([]byte, 8192)
	m, err := pd.RegMR(buf, AccessLocalWrite|AccessRemoteWrite|AccessRemoteRead)
	require.NoError(t, err)
	assert.Equal(t, m.RKey(), m.LKey(), "keys lkey %#x rkey %#x", m.LKey(), m.RKey())
	assert.NotEqual(t, uint32(0), m.LKey(), "keys lkey %#x rkey %#x", m.LKey(), m.RKey())
	assert.Equal(t, uint64(uintptr(unsafe.Pointer(&buf[0]))), m.Addr(), "MR addr %#x len %d pd %p valid %v", m.Addr(), m.Length(), m.PD(), m.Valid())
	assert.Equal(t, uint64(8192), m.Length(), "MR addr %#x len %d pd %p valid %v", m.Addr(), m.Length(), m.PD(), m.Valid())
	assert.Same(t, pd, m.PD(), "MR addr %#x len %d pd %p valid %v", m.Addr(), m.Length(), m.PD(), m.Valid())
	assert.True(t, m.Valid(), "MR addr %#x len %d pd %p valid %v", m.Addr(), m.Length(), m.PD(), m.Valid())
	assert.Equal(t, AccessLocalWrite|AccessRemoteWrite|AccessRemoteRead, m.Access(), "Access %v", m.Access())
	assert.ErrorIs(t, pd.Dealloc(), ErrPDInUse, "Dealloc with a registered MR")

	zb, err := pd.RegMR(buf[:4096], AccessLocalWrite|AccessZeroBased)
	require.NoError(t, err, "zero-based RegMR: addr %#x, %v", zb.Addr(), err)
	require.Equal(t, uint64(0), zb.Addr(), "zero-based RegMR: addr %#x, %v", zb.Addr(), err)
	io, err := pd.RegMRIOVA(buf[:100], 0x1000_0000, AccessLocalWrite)
	require.NoError(t, err, "RegMRIOVA: %v", err)
	require.Equal(t, uint64(0x1000_0000), io.Addr(), "RegMRIOVA: %v", err)
	require.Equal(t, uint64(100), io.Length(), "RegMRIOVA: %v", err)

	// Rereg to another PD changes the PD and keeps the keys.
	pd2, _ := d.AllocPD()
	old := m.LKey()
	require.NoError(t, m.Rereg(ReregChangePD|ReregChangeAccess, pd2, nil, AccessLocalWrite))
	assert.Same(t, pd2, m.PD(), "after rereg: pd %p key %#x (was %#x) access %v", m.PD(), m.LKey(), old, m.Access())
	assert.Equal(t, old, m.LKey(), "after rereg: pd %p key %#x (was %#x) access %v", m.PD(), m.LKey(), old, m.Access())
	assert.Equal(t, AccessLocalWrite, m.Access(), "after rereg: pd %p key %#x (was %#x) access %v", m.PD(), m.LKey(), old, m.Access())
	assert.ErrorIs(t, m.Rereg(0, nil, nil, 0), ErrReregFlags, "Rereg without flags")
	assert.ErrorIs(t, m.Rereg(ReregChangePD, nil, nil, 0), ErrNilObject, "Rereg to a nil PD")

	for _, r := range []*MR{m, zb, io} {
		require.NoError(t, r.Dereg())
	}
	assert.ErrorIs(t, m.Dereg(), ErrDestroyed, "second Dereg")
	require.NoError(t, pd.Dealloc())
	assert.ErrorIs(t, pd.Dealloc(), ErrDestroyed, "second Dealloc")
	if _, err := pd.RegMR(buf, AccessLocalWrite); !errors.Is(err, ErrDestroyed) {
		assert.Fail(t, fmt.Sprintf("RegMR on a deallocated PD: %v", err))
	}
}

func TestMRMisuse(t *testing.T) {
	f := newTestFabric(t)
	d, other := f.open(t, "10.0.0.1"), f.open(t, "10.0.0.2")
	pd, _ := d.AllocPD()
	opd, _ := other.AllocPD()
	buf := make([]byte, 64)
	_, err := pd.RegMR(nil, AccessLocalWrite)
	assert.ErrorIs(t, err, ErrEmptyRegion, "RegMR of nothing: %v", err)
	_, err = pd.RegMR(buf, AccessRemoteWrite)
	assert.ErrorIs(t, err, ErrAccessFlags, "remote write without local write: %v", err)
	_, err = pd.RegMRIOVA(buf, 5, AccessZeroBased)
	assert.False(t, !errors.Is(err, ErrZeroBased) && !errors.Is(err, ErrAccessFlags), "zero-based with an IOVA: %v", err)
	m, _ := pd.RegMR(buf, AccessLocalWrite)
	assert.ErrorIs(t, m.Rereg(ReregChangePD, opd, nil, 0), ErrWrongDevice, "Rereg to another device's PD")
	var e *Error
	err = m.Rereg(ReregChangePD, opd, nil, 0)
	assert.ErrorAs(t, err, &e, "error %v does not name rereg_mr", err)
	assert.Equal(t, "rereg_mr", e.Op, "error %v does not name rereg_mr", err)
}

func TestFastRegMRAndMW(t *testing.T) {
	d := newTestFabric(t).open(t, "10.0.0.1")
	pd, _ := d.AllocPD()
	fr, err := pd.AllocMR(16)
	require.NoError(t, err)
	assert.False(t, fr.Valid(), "a fresh fast-register MR is valid")
	if _, err := pd.AllocMR(100000); !errors.Is(err, ErrPageList) && !errors.Is(err, ErrInvalidArgument) {
		assert.Fail(t, fmt.Sprintf("AllocMR beyond max_fast_reg_page_list_len: %v", err))
	}
	for _, typ := range []MWType{MWType1, MWType2} {
		w, err := pd.AllocMW(typ)
		require.NoError(t, err)
		assert.Equal(t, typ, w.Type(), "MW type %v: %+v", typ, w)
		assert.Same(t, pd, w.PD(), "MW type %v: %+v", typ, w)
		assert.False(t, w.Bound(), "MW type %v: %+v", typ, w)
		assert.NotEqual(t, uint32(0), w.RKey(), "MW type %v: %+v", typ, w)
		assert.ErrorIs(t, pd.Dealloc(), ErrPDInUse, "Dealloc with a window")
		require.NoError(t, w.Dealloc())
		assert.ErrorIs(t, w.Dealloc(), ErrDestroyed, "second MW Dealloc")
	}
	require.NoError(t, fr.Dereg())
	require.NoError(t, pd.Dealloc())
	got := IncKey(0x1234_56ff)
	assert.Equal(t, uint32(0x1234_5600), got, "IncKey wraps the variant: %#x", got)
}

func TestAllocBuffer(t *testing.T) {
	d := newTestFabric(t).open(t, "10.0.0.1")
	pd, _ := d.AllocPD()
	b, err := AllocBuffer(10000, BufferOptions{})
	require.NoError(t, err)
	require.Len(t, b.Bytes(), 10000, "Bytes len %d", len(b.Bytes()))
	m, err := pd.RegMR(b.Bytes(), AccessLocalWrite)
	require.NoError(t, err)
	assert.ErrorIs(t, b.Free(), ErrBufferInUse, "Free of a registered buffer")
	m.Dereg()
	require.NoError(t, b.Free())
	if _, err := AllocBuffer(0, BufferOptions{}); !errors.Is(err, ErrBufferSize) {
		assert.Fail(t, fmt.Sprintf("AllocBuffer(0): %v", err))
	}
}

func TestCQAndCompChannel(t *testing.T) {
	f := newTestFabric(t)
	d, other := f.open(t, "10.0.0.1"), f.open(t, "10.0.0.2")
	for _, n := range []int{0, -1, MaxCQE + 1} {
		if _, err := d.CreateCQ(n, nil); !errors.Is(err, ErrInvalidCQSize) {
			assert.Fail(t, fmt.Sprintf("CreateCQ(%d): %v", n, err))
		}
	}
	ch, err := d.CreateCompChannel()
	require.NoError(t, err)
	och, _ := other.CreateCompChannel()
	if _, err := d.CreateCQ(4, och); !errors.Is(err, ErrWrongDevice) {
		assert.Fail(t, fmt.Sprintf("CreateCQ with another device's channel: %v", err))
	}
	c, err := d.CreateCQ(16, ch)
	require.NoError(t, err)
	assert.Equal(t, 16, c.CQE(), "CQ cqe %d channel %p err %v", c.CQE(), c.Channel(), c.Err())
	assert.Same(t, ch, c.Channel(), "CQ cqe %d channel %p err %v", c.CQE(), c.Channel(), c.Err())
	assert.NoError(t, c.Err(), "CQ cqe %d channel %p err %v", c.CQE(), c.Channel(), c.Err())
	n := c.Poll(make([]WC, 8))
	assert.Equal(t, 0, n, "Poll of an empty CQ = %d", n)
	require.NoError(t, c.ReqNotify(false))
	// Nothing completes, so GetEvent times out with the context's error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ch.GetEvent(ctx); !errors.Is(err, context.Canceled) {
		assert.Fail(t, fmt.Sprintf("GetEvent with no event: %v", err))
	}
	if err := c.Resize(32); err != nil || c.CQE() != 32 {
		assert.Fail(t, fmt.Sprintf("Resize: %v, cqe %d", err, c.CQE()))
	}
	assert.ErrorIs(t, c.AckEvents(1), ErrAckTooMany, "AckEvents of nothing")
	assert.ErrorIs(t, ch.Destroy(), ErrInUse, "Destroy of a channel with a CQ")
	require.NoError(t, c.Destroy())
	assert.ErrorIs(t, c.Destroy(), ErrDestroyed, "second CQ Destroy")
	require.NoError(t, ch.Destroy())
	if _, err := ch.GetEvent(context.Background()); !errors.Is(err, ErrDestroyed) {
		assert.Fail(t, fmt.Sprintf("GetEvent on a destroyed channel: %v", err))
	}
}
