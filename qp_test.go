package gorxe

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testQPs holds what most QP tests need: a device, a PD, a CQ pair.
type testQPs struct {
	d    *Device
	pd   *PD
	cq   *CQ
	buf  []byte
	mr   *MR
	caps QPCap
}

func newTestQPs(t *testing.T, d *Device) *testQPs {
	t.Helper()
	pd, err := d.AllocPD()
	require.NoError(t, err)
	c, err := d.CreateCQ(64, nil)
	require.NoError(t, err)
	buf := make([]byte, 1<<16)
	m, err := pd.RegMR(buf, AccessLocalWrite|AccessRemoteWrite|AccessRemoteRead|AccessRemoteAtomic)
	require.NoError(t, err)
	return &testQPs{d: d, pd: pd, cq: c, buf: buf, mr: m, caps: QPCap{MaxSendWR: 16, MaxRecvWR: 16, MaxSendSGE: 1, MaxRecvSGE: 1}}
}

func (x *testQPs) create(t *testing.T, typ QPType) *QP {
	t.Helper()
	q, err := x.d.CreateQP(x.pd, &QPInitAttr{SendCQ: x.cq, RecvCQ: x.cq, Cap: x.caps, QPType: typ, Context: "ctx"})
	require.NoError(t, err, "CreateQP(%v)", typ)
	return q
}

// Attribute values and masks exactly as rdma-core's ibv_rc_pingpong sets them (pp_connect_ctx),
// with a GID as rxe needs.
const (
	rcInitMask = QPAttrState | QPAttrPKeyIndex | QPAttrPort | QPAttrAccessFlags
	rcRTRMask  = QPAttrState | QPAttrAV | QPAttrPathMTU | QPAttrDestQPN | QPAttrRQPSN |
		QPAttrMaxDestRdAtomic | QPAttrMinRNRTimer
	rcRTSMask = QPAttrState | QPAttrTimeout | QPAttrRetryCnt | QPAttrRNRRetry | QPAttrSQPSN |
		QPAttrMaxQPRdAtomic
)

// connectRC walks q from RESET to RTS against a peer QP at (dgid, dqpn), as ibv_rc_pingpong does.
func connectRC(t testing.TB, q *QP, dgid GID, dqpn, rqPSN, sqPSN uint32, mtu MTU) {
	t.Helper()
	connectRCTimeout(t, q, dgid, dqpn, rqPSN, sqPSN, mtu, 14)
}

// connectRCTimeout is connectRC with a chosen local ACK timeout.
func connectRCTimeout(t testing.TB, q *QP, dgid GID, dqpn, rqPSN, sqPSN uint32, mtu MTU, timeout uint8) {
	t.Helper()
	require.NoError(t, q.Modify(&QPAttr{State: QPStateInit, PKeyIndex: 0, PortNum: 1,
		AccessFlags: AccessRemoteWrite | AccessRemoteRead | AccessRemoteAtomic}, rcInitMask), "RESET->INIT")
	require.NoError(t, q.Modify(&QPAttr{
		State: QPStateRTR, PathMTU: mtu, DestQPNum: dqpn, RQPSN: rqPSN, MaxDestRdAtomic: 1, MinRNRTimer: 12,
		AHAttr: AHAttr{IsGlobal: true, PortNum: 1, GRH: GlobalRoute{DGID: dgid, SGIDIndex: 1, HopLimit: 1}},
	}, rcRTRMask), "INIT->RTR")
	require.NoError(t, q.Modify(&QPAttr{State: QPStateRTS, Timeout: timeout, RetryCnt: 7, RNRRetry: 7, SQPSN: sqPSN, MaxRdAtomic: 1}, rcRTSMask), "RTR->RTS")
}

func TestQPRCWalkLikeRCPingpong(t *testing.T) {
	f := newTestFabric(t)
	x := newTestQPs(t, f.open(t, "10.0.0.1"))
	q := x.create(t, QPTypeRC)
	require.False(t, q.QPN() != 16 || q.Type() != QPTypeRC || q.State() != QPStateReset || q.Context() != "ctx", "fresh QP: qpn %d type %v state %v", q.QPN(), q.Type(), q.State())
	require.Same(t, x.pd, q.PD(), "fresh QP: qpn %d type %v state %v", q.QPN(), q.Type(), q.State())
	require.Same(t, x.cq, q.SendCQ(), "fresh QP: qpn %d type %v state %v", q.QPN(), q.Type(), q.State())
	require.Same(t, x.cq, q.RecvCQ(), "fresh QP: qpn %d type %v state %v", q.QPN(), q.Type(), q.State())
	require.Nil(t, q.SRQ(), "fresh QP: qpn %d type %v state %v", q.QPN(), q.Type(), q.State())
	require.Same(t, x.d, q.Device(), "fresh QP: qpn %d type %v state %v", q.QPN(), q.Type(), q.State())
	peer := GIDFromAddr(mustAddr("10.0.0.2"))
	connectRC(t, q, peer, 0x123456, 0xabcdef, 0x654321, MTU1024)
	a, in, err := q.Query()
	require.NoError(t, err)
	assert.Equal(t, QPStateRTS, a.State, "Query after the walk: %+v", a)
	assert.Equal(t, MTU1024, a.PathMTU, "Query after the walk: %+v", a)
	assert.Equal(t, uint32(0x123456), a.DestQPNum, "Query after the walk: %+v", a)
	assert.Equal(t, uint32(0xabcdef), a.RQPSN, "Query after the walk: %+v", a)
	assert.Equal(t, uint32(0x654321), a.SQPSN, "Query after the walk: %+v", a)
	assert.Equal(t, uint8(14), a.Timeout, "Query after the walk: %+v", a)
	assert.Equal(t, uint8(7), a.RetryCnt, "Query after the walk: %+v", a)
	assert.Equal(t, uint8(7), a.RNRRetry, "Query after the walk: %+v", a)
	assert.Equal(t, uint8(1), a.MaxRdAtomic, "Query after the walk: %+v", a)
	assert.Equal(t, uint8(1), a.MaxDestRdAtomic, "Query after the walk: %+v", a)
	assert.Equal(t, uint8(12), a.MinRNRTimer, "Query after the walk: %+v", a)
	assert.Equal(t, uint8(1), a.PortNum, "Query after the walk: %+v", a)
	assert.Equal(t, peer, GID(a.AHAttr.GRH.DGID), "Query after the walk: %+v", a)
	assert.Equal(t, AccessRemoteWrite|AccessRemoteRead|AccessRemoteAtomic, a.AccessFlags, "Query after the walk: %+v", a)
	assert.False(t, in.QPType != QPTypeRC || in.SendCQ != x.cq || in.Context != "ctx", "Query init attributes: %+v", in)
	assert.Equal(t, x.caps, in.Cap, "Query init attributes: %+v", in)
}

func TestQPUDWalkLikeUDPingpong(t *testing.T) {
	x := newTestQPs(t, newTestFabric(t).open(t, "10.0.0.1"))
	q := x.create(t, QPTypeUD)
	steps := []struct {
		attr QPAttr
		mask QPAttrMask
	}{
		{QPAttr{State: QPStateInit, PKeyIndex: 0, PortNum: 1, QKey: 0x11111111}, QPAttrState | QPAttrPKeyIndex | QPAttrPort | QPAttrQKey},
		{QPAttr{State: QPStateRTR}, QPAttrState},
		{QPAttr{State: QPStateRTS, SQPSN: 77}, QPAttrState | QPAttrSQPSN},
	}
	for _, s := range steps {
		require.NoError(t, q.Modify(&s.attr, s.mask), "-> %v", s.attr.State)
		require.Equal(t, s.attr.State, q.State(), "state %v, want %v", q.State(), s.attr.State)
	}
}

func TestQPModifyMisuse(t *testing.T) {
	x := newTestQPs(t, newTestFabric(t).open(t, "10.0.0.1"))
	q := x.create(t, QPTypeRC)
	err := q.Modify(&QPAttr{State: QPStateRTS}, QPAttrState)
	var me *ModifyError
	assert.ErrorIs(t, err, ErrInvalidTransition, "RESET->RTS: %v", err)
	assert.ErrorAs(t, err, &me, "RESET->RTS: %v", err)
	assert.Equal(t, QPStateReset, me.From, "RESET->RTS: %v", err)
	assert.Equal(t, QPStateRTS, me.To, "RESET->RTS: %v", err)
	err = q.Modify(&QPAttr{State: QPStateInit}, QPAttrState|QPAttrPort)
	assert.ErrorIs(t, err, ErrMissingAttr, "RESET->INIT without PKEY_INDEX and ACCESS_FLAGS: %v", err)
	assert.ErrorAs(t, err, &me, "RESET->INIT without PKEY_INDEX and ACCESS_FLAGS: %v", err)
	assert.Equal(t, QPAttrPKeyIndex|QPAttrAccessFlags, me.Missing, "RESET->INIT without PKEY_INDEX and ACCESS_FLAGS: %v", err)
	var e *Error
	assert.ErrorAs(t, err, &e, "error %v does not name modify_qp", err)
	assert.Equal(t, "modify_qp", e.Op, "error %v does not name modify_qp", err)
	assert.ErrorIs(t, q.Modify(nil, QPAttrState), ErrNilObject, "Modify(nil)")
	require.NoError(t, q.Modify(&QPAttr{State: QPStateInit, PortNum: 1}, rcInitMask))
	// GID index 0 is the link-local GID, which a device bound to one address cannot send from.
	rtr := QPAttr{State: QPStateRTR, PathMTU: MTU1024, DestQPNum: 17, MaxDestRdAtomic: 1, MinRNRTimer: 12,
		AHAttr: AHAttr{IsGlobal: true, PortNum: 1, GRH: GlobalRoute{DGID: GIDFromAddr(mustAddr("10.0.0.2")), SGIDIndex: 0}}}
	assert.ErrorIs(t, q.Modify(&rtr, rcRTRMask), ErrInvalidGIDIndex, "RTR with sgid_index 0")
	rtr.AHAttr.GRH.SGIDIndex = 7
	assert.ErrorIs(t, q.Modify(&rtr, rcRTRMask), ErrInvalidGIDIndex, "RTR with sgid_index 7")
	rtr.AHAttr.GRH.SGIDIndex = 1
	// The device's only address is IPv4: no path to an IPv6 GID leaves from it (the kernel's
	// modify_qp fails with EINVAL when it cannot resolve the path).
	rtr.AHAttr.GRH.DGID = GIDFromAddr(mustAddr("fd00::2"))
	err = q.Modify(&rtr, rcRTRMask)
	assert.ErrorIs(t, err, ErrInvalidGIDIndex, "RTR from an IPv4 GID to an IPv6 one")
	assert.EqualError(t, err, "gorxe: modify_qp: invalid GID index: ah_attr.grh.sgid_index = 1, must be a local address of the destination's family")
	rtr.AHAttr.GRH.DGID = GIDFromAddr(mustAddr("10.0.0.2"))
	rtr.PathMTU = 9
	assert.ErrorIs(t, q.Modify(&rtr, rcRTRMask), ErrInvalidAttr, "RTR with path MTU 9")
	assert.Equal(t, QPStateInit, q.State(), "a failed Modify changed the state to %v", q.State())
}

func TestCreateQPMisuse(t *testing.T) {
	f := newTestFabric(t)
	x := newTestQPs(t, f.open(t, "10.0.0.1"))
	y := newTestQPs(t, f.open(t, "10.0.0.2"))
	d := x.d
	cases := []struct {
		name string
		pd   *PD
		attr *QPInitAttr
		want error
	}{
		{"nil PD", nil, &QPInitAttr{SendCQ: x.cq, RecvCQ: x.cq, QPType: QPTypeRC}, ErrNilObject},
		{"PD of another device", y.pd, &QPInitAttr{SendCQ: x.cq, RecvCQ: x.cq, QPType: QPTypeRC}, ErrWrongDevice},
		{"nil attributes", x.pd, nil, ErrNilObject},
		{"no send CQ", x.pd, &QPInitAttr{RecvCQ: x.cq, QPType: QPTypeRC}, ErrMissingCQ},
		{"CQ of another device", x.pd, &QPInitAttr{SendCQ: y.cq, RecvCQ: x.cq, QPType: QPTypeRC}, ErrWrongDevice},
		{"XRC", x.pd, &QPInitAttr{SendCQ: x.cq, RecvCQ: x.cq, QPType: 9}, ErrInvalidQPType},
		{"too many WRs", x.pd, &QPInitAttr{SendCQ: x.cq, RecvCQ: x.cq, QPType: QPTypeRC, Cap: QPCap{MaxSendWR: 1<<20 + 1}}, ErrInvalidCaps},
		{"too many SGEs", x.pd, &QPInitAttr{SendCQ: x.cq, RecvCQ: x.cq, QPType: QPTypeRC, Cap: QPCap{MaxRecvSGE: 33}}, ErrInvalidCaps},
		{"inline too long", x.pd, &QPInitAttr{SendCQ: x.cq, RecvCQ: x.cq, QPType: QPTypeRC, Cap: QPCap{MaxInlineData: 513}}, ErrInvalidCaps},
	}
	for _, c := range cases {
		_, err := d.CreateQP(c.pd, c.attr)
		assert.ErrorIs(t, err, c.want, "%s: %v, want %v", c.name, err, c.want)
	}
	g := x.create(t, QPTypeGSI)
	assert.Equal(t, uint32(1), g.QPN(), "GSI QPN %d, want 1", g.QPN())
	_, err := d.CreateQP(x.pd, &QPInitAttr{SendCQ: x.cq, RecvCQ: x.cq, QPType: QPTypeGSI})
	assert.ErrorIs(t, err, ErrGSIExists, "second GSI QP: %v", err)
}

func TestQPDestroyAndDependencies(t *testing.T) {
	x := newTestQPs(t, newTestFabric(t).open(t, "10.0.0.1"))
	q := x.create(t, QPTypeRC)
	assert.ErrorIs(t, x.cq.Destroy(), ErrInUse, "destroying a CQ a QP uses")
	x.mr.Dereg()
	assert.ErrorIs(t, x.pd.Dealloc(), ErrPDInUse, "deallocating a PD a QP uses")
	require.NoError(t, q.Destroy())
	assert.ErrorIs(t, q.Destroy(), ErrDestroyed, "second Destroy")
	assert.Error(t, q.PostRecv([]RecvWR{{ID: 1}}), "PostRecv on a destroyed QP succeeded")
	assert.NoError(t, x.cq.Destroy(), "CQ Destroy after the QP")
	assert.NoError(t, x.pd.Dealloc(), "PD Dealloc after the QP")
	// The QP number is free again, but allocation moves on cyclically, as rxe's pool does.
	y := newTestQPs(t, x.d)
	q2 := y.create(t, QPTypeRC)
	assert.NotEqual(t, uint32(0), q2.QPN(), "new QPN %d", q2.QPN())
	assert.NotEqual(t, uint32(1), q2.QPN(), "new QPN %d", q2.QPN())
}

func TestPostMisuse(t *testing.T) {
	x := newTestQPs(t, newTestFabric(t).open(t, "10.0.0.1"))
	q := x.create(t, QPTypeRC)
	sge := []SGE{{Addr: x.mr.Addr(), Length: 8, LKey: x.mr.LKey()}}
	err := q.PostSend([]SendWR{{ID: 1, Opcode: WRSend, SGList: sge}})
	var pe *PostError
	assert.ErrorIs(t, err, ErrInvalidState, "PostSend in RESET: %v", err)
	assert.ErrorAs(t, err, &pe, "PostSend in RESET: %v", err)
	assert.Equal(t, 0, pe.Index, "PostSend in RESET: %v", err)
	assert.ErrorIs(t, q.PostRecv([]RecvWR{{ID: 1, SGList: sge}}), ErrInvalidState, "PostRecv in RESET")
	connectRC(t, q, GIDFromAddr(mustAddr("10.0.0.2")), 99, 0, 0, MTU1024)
	err = q.PostSend([]SendWR{
		{ID: 1, Opcode: WRRDMAWrite, SGList: sge, RDMA: RDMAInfo{RemoteAddr: 0x1000, RKey: 5}},
		{ID: 2, Opcode: WRSend, SGList: []SGE{sge[0], sge[0]}},
	})
	assert.ErrorIs(t, err, ErrTooManySGE, "PostSend with 2 SGEs on a 1-SGE queue: %v", err)
	assert.ErrorAs(t, err, &pe, "PostSend with 2 SGEs on a 1-SGE queue: %v", err)
	assert.Equal(t, 1, pe.Index, "PostSend with 2 SGEs on a 1-SGE queue: %v", err)
	ud := x.create(t, QPTypeUD)
	require.NoError(t, ud.Modify(&QPAttr{State: QPStateInit, PortNum: 1, QKey: 1}, QPAttrState|QPAttrPKeyIndex|QPAttrPort|QPAttrQKey))
	ud.Modify(&QPAttr{State: QPStateRTR}, QPAttrState)
	ud.Modify(&QPAttr{State: QPStateRTS}, QPAttrState|QPAttrSQPSN)
	assert.ErrorIs(t, ud.PostSend([]SendWR{{ID: 1, Opcode: WRRDMAWrite, SGList: sge}}), ErrInvalidOpcode, "RDMA WRITE on UD")
}

func TestCloseFlushesOutstandingWork(t *testing.T) {
	f := newTestFabric(t)
	d := f.open(t, "10.0.0.1")
	x := newTestQPs(t, d)
	q := x.create(t, QPTypeRC)
	// Receives may be posted from INIT on; the peer never connects.
	require.NoError(t, q.Modify(&QPAttr{State: QPStateInit, PortNum: 1}, rcInitMask))
	for i := range 3 {
		require.NoError(t, q.PostRecv([]RecvWR{{ID: uint64(100 + i), SGList: []SGE{{Addr: x.mr.Addr(), Length: 64, LKey: x.mr.LKey()}}}}))
	}
	require.NoError(t, d.Close())
	wcs := make([]WC, 8)
	n := x.cq.Poll(wcs)
	require.Equal(t, 3, n, "polled %d completions after Close, want 3 flushed receives", n)
	for i, wc := range wcs[:n] {
		assert.Equal(t, WCWRFlushErr, wc.Status, "completion %d: %+v", i, wc)
		assert.Equal(t, uint64(100+i), wc.WRID, "completion %d: %+v", i, wc)
		assert.Equal(t, q.QPN(), wc.QPNum, "completion %d: %+v", i, wc)
	}
	assert.Equal(t, QPStateErr, q.State(), "QP state after Close: %v", q.State())
	assert.ErrorIs(t, q.PostSend(nil), ErrDeviceClosed, "PostSend after Close")
	assert.ErrorIs(t, q.Modify(&QPAttr{State: QPStateReset}, QPAttrState), ErrDeviceClosed, "Modify after Close")
	assert.ErrorIs(t, q.Destroy(), ErrDeviceClosed, "Destroy after Close: Close released the QP")
}

func TestSRQAndLastWQEEvent(t *testing.T) {
	x := newTestQPs(t, newTestFabric(t).open(t, "10.0.0.1"))
	d := x.d
	srq, err := d.CreateSRQ(x.pd, &SRQInitAttr{Context: 7, Attr: SRQAttr{MaxWR: 8, MaxSGE: 1}})
	require.NoError(t, err)
	assert.False(t, srq.Context() != 7 || srq.PD() != x.pd, "SRQ context %v", srq.Context())
	sge := []SGE{{Addr: x.mr.Addr(), Length: 64, LKey: x.mr.LKey()}}
	require.NoError(t, srq.PostRecv([]RecvWR{{ID: 1, SGList: sge}, {ID: 2, SGList: sge}}))
	assert.Equal(t, 2, srq.Len(), "SRQ Len %d", srq.Len())
	require.NoError(t, srq.Modify(&SRQAttr{SRQLimit: 1}, SRQLimit))
	if a, err := srq.Query(); err != nil || a.MaxWR != 8 || a.SRQLimit != 1 {
		assert.Fail(t, fmt.Sprintf("SRQ Query %+v, %v", a, err))
	}
	if _, err := d.CreateSRQ(x.pd, nil); !errors.Is(err, ErrNilObject) {
		assert.Fail(t, fmt.Sprintf("CreateSRQ(nil): %v", err))
	}
	q, err := d.CreateQP(x.pd, &QPInitAttr{SendCQ: x.cq, RecvCQ: x.cq, SRQ: srq, QPType: QPTypeRC, Cap: QPCap{MaxSendWR: 4, MaxSendSGE: 1}})
	require.NoError(t, err)
	assert.ErrorIs(t, q.PostRecv([]RecvWR{{ID: 3, SGList: sge}}), ErrHasSRQ, "PostRecv on a QP with an SRQ")
	assert.ErrorIs(t, srq.Destroy(), ErrInUse, "destroying an SRQ in use")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if ev, _ := d.GetAsyncEvent(ctx); ev.Type != EventPortActive {
		require.Fail(t, fmt.Sprintf("first event %v", ev.Type))
	}
	q.Modify(&QPAttr{State: QPStateInit, PortNum: 1}, rcInitMask)
	require.NoError(t, q.Modify(&QPAttr{State: QPStateErr}, QPAttrState))
	ev, err := d.GetAsyncEvent(ctx)
	assert.NoError(t, err, "event %+v, %v; want last WQE reached on the QP", ev, err)
	assert.Equal(t, EventQPLastWQEReached, ev.Type, "event %+v, %v; want last WQE reached on the QP", ev, err)
	assert.Same(t, q, ev.QP, "event %+v, %v; want last WQE reached on the QP", ev, err)
	assert.Equal(t, 2, srq.Len(), "entering ERR touched the SRQ: Len %d", srq.Len())
	q.Destroy()
	require.NoError(t, srq.Destroy())
}

func TestAddressHandles(t *testing.T) {
	x := newTestQPs(t, newTestFabric(t).open(t, "10.0.0.1"))
	dgid := GIDFromAddr(mustAddr("10.0.0.2"))
	ah, err := x.pd.CreateAH(&AHAttr{IsGlobal: true, PortNum: 1, GRH: GlobalRoute{DGID: dgid, SGIDIndex: 1, HopLimit: 64}})
	require.NoError(t, err)
	assert.Equal(t, dgid, GID(ah.Attr().GRH.DGID))
	assert.Same(t, x.pd, ah.PD())

	// A UD send names its destination with an *AH; anything else is refused at post, a nil *AH
	// included.
	ud := x.create(t, QPTypeUD)
	require.NoError(t, ud.Modify(&QPAttr{State: QPStateInit, PortNum: 1, QKey: 1}, QPAttrState|QPAttrPKeyIndex|QPAttrPort|QPAttrQKey))
	require.NoError(t, ud.Modify(&QPAttr{State: QPStateRTR}, QPAttrState))
	require.NoError(t, ud.Modify(&QPAttr{State: QPStateRTS}, QPAttrState|QPAttrSQPSN))
	for name, h := range map[string]AddressHandle{"nil interface": nil, "nil *AH": (*AH)(nil), "foreign": foreignAH{}} {
		err := ud.PostSend([]SendWR{{Opcode: WRSend, UD: UDInfo{AH: h, RemoteQPN: 2, RemoteQKey: 1}}})
		assert.ErrorIs(t, err, ErrInvalidAH, name)
	}
	require.NoError(t, ud.PostSend([]SendWR{{Opcode: WRSend, UD: UDInfo{AH: ah, RemoteQPN: 2, RemoteQKey: 1}}}))
	_, err = x.pd.CreateAH(&AHAttr{IsGlobal: true, PortNum: 1, GRH: GlobalRoute{DGID: dgid, SGIDIndex: 0}})
	assert.ErrorIs(t, err, ErrInvalidGIDIndex, "AH from the link-local GID")
	// An IPv6 destination from the device's only address, an IPv4 one: no route, so no AH (the
	// kernel's ibv_create_ah fails with EINVAL when source and destination families differ).
	ah6, err := x.pd.CreateAH(&AHAttr{IsGlobal: true, PortNum: 1, GRH: GlobalRoute{DGID: GIDFromAddr(mustAddr("fd00::2")), SGIDIndex: 1}})
	assert.Nil(t, ah6)
	assert.ErrorIs(t, err, ErrInvalidGIDIndex, "AH from an IPv4 GID to an IPv6 one")
	assert.EqualError(t, err, "gorxe: create_ah: invalid GID index: ah_attr.grh.sgid_index = 1, must be a local address of the destination's family")
	_, err = x.pd.CreateAH(&AHAttr{PortNum: 1})
	assert.True(t, errors.Is(err, ErrInvalidAH) || errors.Is(err, ErrInvalidAttr), "AH without a GRH: %v", err)
	_, err = x.pd.CreateAH(nil)
	assert.ErrorIs(t, err, ErrNilObject)
	require.NoError(t, ah.Destroy())
	err = ah.Destroy()
	assert.ErrorIs(t, err, ErrDestroyed)
	var verr *Error
	require.ErrorAs(t, err, &verr, "AH errors are *Error like every verb's")
	assert.Equal(t, "gorxe: destroy_ah: object destroyed", err.Error())
}

func TestMulticastAttachMisuse(t *testing.T) {
	x := newTestQPs(t, newTestFabric(t).open(t, "10.0.0.1"))
	rc := x.create(t, QPTypeRC)
	ud := x.create(t, QPTypeUD)
	group := GIDFromAddr(mustAddr("239.1.2.3"))
	assert.ErrorIs(t, rc.AttachMcast(group, 0), ErrInvalidQPType, "attach an RC QP")
	assert.ErrorIs(t, ud.AttachMcast(GIDFromAddr(mustAddr("10.9.9.9")), 0), ErrInvalidArgument, "attach to a unicast GID")
	require.NoError(t, ud.AttachMcast(group, 0))
	assert.ErrorIs(t, ud.AttachMcast(group, 0), ErrInvalidArgument, "attach twice")
	require.NoError(t, ud.DetachMcast(group, 0))
	assert.ErrorIs(t, ud.DetachMcast(group, 0), ErrInvalidArgument, "detach twice")
}

func TestBindMWMisuse(t *testing.T) {
	x := newTestQPs(t, newTestFabric(t).open(t, "10.0.0.1"))
	q := x.create(t, QPTypeRC)
	w2, _ := x.pd.AllocMW(MWType2)
	_, err := q.BindMW(w2, MWBindInfo{MR: x.mr, Length: 8})
	assert.ErrorIs(t, err, ErrMWType, "BindMW of a type 2 window: %v", err)
	_, err = q.BindMW(nil, MWBindInfo{})
	assert.ErrorIs(t, err, ErrNilObject, "BindMW(nil): %v", err)
	w1, _ := x.pd.AllocMW(MWType1)
	_, err = q.BindMW(w1, MWBindInfo{MR: x.mr, Addr: x.mr.Addr(), Length: 8, Access: AccessRemoteRead})
	assert.ErrorIs(t, err, ErrInvalidState, "BindMW on a RESET QP: %v", err)
}

// foreignAH has AH's method set but is no address handle of the device.
type foreignAH struct{}

func (foreignAH) Attr() AHAttr { return AHAttr{IsGlobal: true, PortNum: 1} }
