package qp

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
)

func TestQPNAllocation(t *testing.T) {
	e := newEnv(t)
	l := DefaultLimits()
	l.MaxQP = 3
	e.table = NewTable(Config{Limits: l})
	gsi := e.qp(TypeGSI, defaultCaps())
	require.Equal(t, uint32(GSIQPN), gsi.QPN(), "GSI QPN")
	_, err := e.table.CreateQP(e.pd, &InitAttr{Type: TypeGSI, SendCQ: e.cq(1), RecvCQ: e.cq(1)})
	require.ErrorIs(t, err, ErrGSIExists, "second GSI")
	a, b, c := e.qp(TypeRC, defaultCaps()), e.qp(TypeUD, defaultCaps()), e.qp(TypeUC, defaultCaps())
	require.Equal(t, []uint32{16, 17, 18}, []uint32{a.QPN(), b.QPN(), c.QPN()}, "QPNs")
	_, err = e.table.CreateQP(e.pd, &InitAttr{Type: TypeRC, SendCQ: e.cq(1), RecvCQ: e.cq(1)})
	require.ErrorIs(t, err, ErrTableFull, "over max_qp")
	require.NoError(t, b.Destroy())
	require.ErrorIs(t, b.Destroy(), ErrDestroyed, "second destroy")
	// Allocation is cyclic: the freed number is reused only after wrapping.
	d := e.qp(TypeRC, defaultCaps())
	require.Equal(t, uint32(17), d.QPN(), "QPN after wrap")
	_ = d.Destroy()
	_ = a.Destroy()
	f := e.qp(TypeRC, defaultCaps())
	require.Equal(t, uint32(16), f.QPN(), "next QPN (17 was just used)")
	require.ErrorIs(t, postSend(b, []SendWR{{Opcode: WRSend}}), ErrDestroyed, "post on destroyed QP")
	require.ErrorIs(t, b.PostRecv([]RecvWR{{}}), ErrDestroyed, "post recv on destroyed QP")
	require.ErrorIs(t, b.Modify(&Attr{}, 0), ErrDestroyed, "modify destroyed QP")
}

func TestCreateQPValidation(t *testing.T) {
	e := newEnv(t)
	l := DefaultLimits()
	cases := []struct {
		name string
		edit func(*InitAttr)
		want error
	}{
		{"type", func(a *InitAttr) { a.Type = 8 }, ErrInvalidType},
		{"no cq", func(a *InitAttr) { a.SendCQ = nil }, ErrMissingCQ},
		{"send wr", func(a *InitAttr) { a.Cap.MaxSendWR = l.MaxQPWR + 1 }, ErrInvalidCaps},
		{"recv wr", func(a *InitAttr) { a.Cap.MaxRecvWR = -1 }, ErrInvalidCaps},
		{"send sge", func(a *InitAttr) { a.Cap.MaxSendSGE = 33 }, ErrInvalidCaps},
		{"recv sge", func(a *InitAttr) { a.Cap.MaxRecvSGE = 33 }, ErrInvalidCaps},
		{"inline", func(a *InitAttr) { a.Cap.MaxInlineData = 513 }, ErrInvalidCaps},
		{"limits", func(a *InitAttr) {
			a.Cap = Caps{MaxSendWR: 16, MaxRecvWR: 16, MaxSendSGE: 32, MaxRecvSGE: 32, MaxInlineData: 512}
		}, nil},
	}
	for _, c := range cases {
		a := InitAttr{Type: TypeRC, SendCQ: e.cq(1), RecvCQ: e.cq(1), Cap: defaultCaps()}
		c.edit(&a)
		_, err := e.table.CreateQP(e.pd, &a)
		if c.want == nil {
			assert.NoError(t, err, c.name)
		} else {
			assert.ErrorIs(t, err, c.want, c.name)
		}
	}
	// The QP holds its PD and CQs.
	sc := e.cq(1)
	q, _ := e.table.CreateQP(e.pd, &InitAttr{Type: TypeRC, SendCQ: sc, RecvCQ: sc})
	require.Error(t, sc.Destroy(), "CQ destroyed under a QP")
	_ = q.Destroy()
	require.NoError(t, sc.Destroy())
}

func TestAH(t *testing.T) {
	e := newEnv(t)
	av := testAV()
	ah, err := e.table.CreateAH(e.pd, &av)
	require.NoError(t, err)
	require.Equal(t, av, ah.Attr(), "attr")
	require.Same(t, e.pd, ah.PD(), "PD")
	av.IsGlobal = false
	var ae *AttrError
	_, err = e.table.CreateAH(e.pd, &av)
	require.ErrorAs(t, err, &ae, "AH without GRH")
	require.Equal(t, "ah_attr.is_global", ae.Name, "AH without GRH")
	av = testAV()
	av.GRH.SGIDIndex = 5
	l := DefaultLimits()
	l.GIDTableLen = 2
	small := NewTable(Config{Limits: l})
	_, err = small.CreateAH(e.pd, &av)
	require.ErrorIs(t, err, ErrInvalidAttr, "sgid index beyond table")
	require.ErrorIs(t, err, ErrInvalidGIDIndex, "sgid index beyond table")
	require.ErrorIs(t, e.pd.DeallocPD(), mr.ErrPDInUse, "PD freed under an AH")
	require.NoError(t, ah.Destroy())
	require.ErrorIs(t, ah.Destroy(), ErrDestroyed, "second destroy")
}

// TestAHRoute: CreateAH resolves the address vector through Config.Route once, and the AH hands
// the result back; an address vector that does not resolve fails CreateAH with the GID index's
// error and leaves the PD unreferenced; a table without Route leaves AHs with an empty route.
func TestAHRoute(t *testing.T) {
	e := newEnv(t)
	av := testAV()
	calls := 0
	want := packet.Envelope{HopLimit: 9}
	resolves := true
	routed := NewTable(Config{Limits: DefaultLimits(), Route: func(got *AddressVector) (packet.Envelope, bool) {
		calls++
		assert.Equal(t, av, *got)
		return want, resolves
	}})
	ah, err := routed.CreateAH(e.pd, &av)
	require.NoError(t, err)
	for range 2 {
		require.Equal(t, want, ah.Route())
	}
	require.Equal(t, 1, calls, "Route calls")
	require.NoError(t, ah.Destroy())

	resolves = false
	ah, err = routed.CreateAH(e.pd, &av)
	require.Nil(t, ah)
	var ae *AttrError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, &AttrError{Name: "ah_attr.grh.sgid_index", Value: uint64(av.GRH.SGIDIndex),
		Limit: "a local address of the destination's family", Err: ErrInvalidGIDIndex}, ae)
	assert.ErrorIs(t, err, ErrInvalidAttr)

	ah, err = e.table.CreateAH(e.pd, &av)
	require.NoError(t, err)
	require.Equal(t, packet.Envelope{}, ah.Route(), "no Config.Route")
	require.NoError(t, ah.Destroy())
	require.NoError(t, e.pd.DeallocPD(), "a failed CreateAH holds no reference to the PD")
}
