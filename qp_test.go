package gorxe

import (
	"context"
	"errors"
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
	if err != nil {
		t.Fatalf("CreateQP(%v): %v", typ, err)
	}
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
	if err := q.Modify(&QPAttr{State: QPStateInit, PKeyIndex: 0, PortNum: 1,
		AccessFlags: AccessRemoteWrite | AccessRemoteRead | AccessRemoteAtomic}, rcInitMask); err != nil {
		t.Fatalf("RESET->INIT: %v", err)
	}
	if err := q.Modify(&QPAttr{
		State: QPStateRTR, PathMTU: mtu, DestQPNum: dqpn, RQPSN: rqPSN, MaxDestRdAtomic: 1, MinRNRTimer: 12,
		AHAttr: AHAttr{IsGlobal: true, PortNum: 1, GRH: GlobalRoute{DGID: dgid, SGIDIndex: 1, HopLimit: 1}},
	}, rcRTRMask); err != nil {
		t.Fatalf("INIT->RTR: %v", err)
	}
	if err := q.Modify(&QPAttr{State: QPStateRTS, Timeout: timeout, RetryCnt: 7, RNRRetry: 7, SQPSN: sqPSN, MaxRdAtomic: 1}, rcRTSMask); err != nil {
		t.Fatalf("RTR->RTS: %v", err)
	}
}

func TestQPRCWalkLikeRCPingpong(t *testing.T) {
	f := newTestFabric(t)
	x := newTestQPs(t, f.open(t, "10.0.0.1"))
	q := x.create(t, QPTypeRC)
	if q.QPN() != 16 || q.Type() != QPTypeRC || q.State() != QPStateReset || q.Context() != "ctx" || q.PD() != x.pd ||
		q.SendCQ() != x.cq || q.RecvCQ() != x.cq || q.SRQ() != nil || q.Device() != x.d {
		t.Fatalf("fresh QP: qpn %d type %v state %v", q.QPN(), q.Type(), q.State())
	}
	peer := GIDFromAddr(mustAddr("10.0.0.2"))
	connectRC(t, q, peer, 0x123456, 0xabcdef, 0x654321, MTU1024)
	a, in, err := q.Query()
	require.NoError(t, err)
	if a.State != QPStateRTS || a.PathMTU != MTU1024 || a.DestQPNum != 0x123456 || a.RQPSN != 0xabcdef ||
		a.SQPSN != 0x654321 || a.Timeout != 14 || a.RetryCnt != 7 || a.RNRRetry != 7 || a.MaxRdAtomic != 1 ||
		a.MaxDestRdAtomic != 1 || a.MinRNRTimer != 12 || a.PortNum != 1 || GID(a.AHAttr.GRH.DGID) != peer ||
		a.AccessFlags != AccessRemoteWrite|AccessRemoteRead|AccessRemoteAtomic {
		t.Errorf("Query after the walk: %+v", a)
	}
	if in.QPType != QPTypeRC || in.SendCQ != x.cq || in.Context != "ctx" || in.Cap != x.caps {
		t.Errorf("Query init attributes: %+v", in)
	}
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
		if err := q.Modify(&s.attr, s.mask); err != nil {
			t.Fatalf("-> %v: %v", s.attr.State, err)
		}
		if q.State() != s.attr.State {
			t.Fatalf("state %v, want %v", q.State(), s.attr.State)
		}
	}
}

func TestQPModifyMisuse(t *testing.T) {
	x := newTestQPs(t, newTestFabric(t).open(t, "10.0.0.1"))
	q := x.create(t, QPTypeRC)
	err := q.Modify(&QPAttr{State: QPStateRTS}, QPAttrState)
	var me *ModifyError
	if !errors.Is(err, ErrInvalidTransition) || !errors.As(err, &me) || me.From != QPStateReset || me.To != QPStateRTS {
		t.Errorf("RESET->RTS: %v", err)
	}
	err = q.Modify(&QPAttr{State: QPStateInit}, QPAttrState|QPAttrPort)
	if !errors.Is(err, ErrMissingAttr) || !errors.As(err, &me) || me.Missing != QPAttrPKeyIndex|QPAttrAccessFlags {
		t.Errorf("RESET->INIT without PKEY_INDEX and ACCESS_FLAGS: %v", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Op != "modify_qp" {
		t.Errorf("error %v does not name modify_qp", err)
	}
	assert.ErrorIs(t, q.Modify(nil, QPAttrState), ErrNilObject, "Modify(nil)")
	require.NoError(t, q.Modify(&QPAttr{State: QPStateInit, PortNum: 1}, rcInitMask))
	// GID index 0 is the link-local GID, which a device bound to one address cannot send from.
	rtr := QPAttr{State: QPStateRTR, PathMTU: MTU1024, DestQPNum: 17, MaxDestRdAtomic: 1, MinRNRTimer: 12,
		AHAttr: AHAttr{IsGlobal: true, PortNum: 1, GRH: GlobalRoute{DGID: GIDFromAddr(mustAddr("10.0.0.2")), SGIDIndex: 0}}}
	assert.ErrorIs(t, q.Modify(&rtr, rcRTRMask), ErrInvalidGIDIndex, "RTR with sgid_index 0")
	rtr.AHAttr.GRH.SGIDIndex = 7
	assert.ErrorIs(t, q.Modify(&rtr, rcRTRMask), ErrInvalidGIDIndex, "RTR with sgid_index 7")
	rtr.AHAttr.GRH.SGIDIndex = 1
	rtr.PathMTU = 9
	assert.ErrorIs(t, q.Modify(&rtr, rcRTRMask), ErrInvalidAttr, "RTR with path MTU 9")
	if q.State() != QPStateInit {
		t.Errorf("a failed Modify changed the state to %v", q.State())
	}
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
		if _, err := d.CreateQP(c.pd, c.attr); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	g := x.create(t, QPTypeGSI)
	if g.QPN() != 1 {
		t.Errorf("GSI QPN %d, want 1", g.QPN())
	}
	if _, err := d.CreateQP(x.pd, &QPInitAttr{SendCQ: x.cq, RecvCQ: x.cq, QPType: QPTypeGSI}); !errors.Is(err, ErrGSIExists) {
		t.Errorf("second GSI QP: %v", err)
	}
}

func TestQPDestroyAndDependencies(t *testing.T) {
	x := newTestQPs(t, newTestFabric(t).open(t, "10.0.0.1"))
	q := x.create(t, QPTypeRC)
	assert.ErrorIs(t, x.cq.Destroy(), ErrInUse, "destroying a CQ a QP uses")
	x.mr.Dereg()
	assert.ErrorIs(t, x.pd.Dealloc(), ErrPDInUse, "deallocating a PD a QP uses")
	require.NoError(t, q.Destroy())
	assert.ErrorIs(t, q.Destroy(), ErrDestroyed, "second Destroy")
	if err := q.PostRecv([]RecvWR{{ID: 1}}); err == nil {
		t.Error("PostRecv on a destroyed QP succeeded")
	}
	if err := x.cq.Destroy(); err != nil {
		t.Errorf("CQ Destroy after the QP: %v", err)
	}
	if err := x.pd.Dealloc(); err != nil {
		t.Errorf("PD Dealloc after the QP: %v", err)
	}
	// The QP number is free again, but allocation moves on cyclically, as rxe's pool does.
	y := newTestQPs(t, x.d)
	if q2 := y.create(t, QPTypeRC); q2.QPN() == 0 || q2.QPN() == 1 {
		t.Errorf("new QPN %d", q2.QPN())
	}
}

func TestPostMisuse(t *testing.T) {
	x := newTestQPs(t, newTestFabric(t).open(t, "10.0.0.1"))
	q := x.create(t, QPTypeRC)
	sge := []SGE{{Addr: x.mr.Addr(), Length: 8, LKey: x.mr.LKey()}}
	err := q.PostSend([]SendWR{{ID: 1, Opcode: WRSend, SGList: sge}})
	var pe *PostError
	if !errors.Is(err, ErrInvalidState) || !errors.As(err, &pe) || pe.Index != 0 {
		t.Errorf("PostSend in RESET: %v", err)
	}
	assert.ErrorIs(t, q.PostRecv([]RecvWR{{ID: 1, SGList: sge}}), ErrInvalidState, "PostRecv in RESET")
	connectRC(t, q, GIDFromAddr(mustAddr("10.0.0.2")), 99, 0, 0, MTU1024)
	err = q.PostSend([]SendWR{
		{ID: 1, Opcode: WRRDMAWrite, SGList: sge, RDMA: RDMAInfo{RemoteAddr: 0x1000, RKey: 5}},
		{ID: 2, Opcode: WRSend, SGList: []SGE{sge[0], sge[0]}},
	})
	if !errors.Is(err, ErrTooManySGE) || !errors.As(err, &pe) || pe.Index != 1 {
		t.Errorf("PostSend with 2 SGEs on a 1-SGE queue: %v", err)
	}
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
	if n != 3 {
		t.Fatalf("polled %d completions after Close, want 3 flushed receives", n)
	}
	for i, wc := range wcs[:n] {
		if wc.Status != WCWRFlushErr || wc.WRID != uint64(100+i) || wc.QPNum != q.QPN() {
			t.Errorf("completion %d: %+v", i, wc)
		}
	}
	if q.State() != QPStateErr {
		t.Errorf("QP state after Close: %v", q.State())
	}
	assert.ErrorIs(t, q.PostSend(nil), ErrDeviceClosed, "PostSend after Close")
	assert.ErrorIs(t, q.Modify(&QPAttr{State: QPStateReset}, QPAttrState), ErrDeviceClosed, "Modify after Close")
	if err := q.Destroy(); err != nil {
		t.Errorf("Destroy after Close: %v", err)
	}
}

func TestSRQAndLastWQEEvent(t *testing.T) {
	x := newTestQPs(t, newTestFabric(t).open(t, "10.0.0.1"))
	d := x.d
	srq, err := d.CreateSRQ(x.pd, &SRQInitAttr{Context: 7, Attr: SRQAttr{MaxWR: 8, MaxSGE: 1}})
	require.NoError(t, err)
	if srq.Context() != 7 || srq.PD() != x.pd {
		t.Errorf("SRQ context %v", srq.Context())
	}
	sge := []SGE{{Addr: x.mr.Addr(), Length: 64, LKey: x.mr.LKey()}}
	require.NoError(t, srq.PostRecv([]RecvWR{{ID: 1, SGList: sge}, {ID: 2, SGList: sge}}))
	if srq.Len() != 2 {
		t.Errorf("SRQ Len %d", srq.Len())
	}
	require.NoError(t, srq.Modify(&SRQAttr{SRQLimit: 1}, SRQLimit))
	if a, err := srq.Query(); err != nil || a.MaxWR != 8 || a.SRQLimit != 1 {
		t.Errorf("SRQ Query %+v, %v", a, err)
	}
	if _, err := d.CreateSRQ(x.pd, nil); !errors.Is(err, ErrNilObject) {
		t.Errorf("CreateSRQ(nil): %v", err)
	}
	q, err := d.CreateQP(x.pd, &QPInitAttr{SendCQ: x.cq, RecvCQ: x.cq, SRQ: srq, QPType: QPTypeRC, Cap: QPCap{MaxSendWR: 4, MaxSendSGE: 1}})
	require.NoError(t, err)
	assert.ErrorIs(t, q.PostRecv([]RecvWR{{ID: 3, SGList: sge}}), ErrHasSRQ, "PostRecv on a QP with an SRQ")
	assert.ErrorIs(t, srq.Destroy(), ErrInUse, "destroying an SRQ in use")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if ev, _ := d.GetAsyncEvent(ctx); ev.Type != EventPortActive {
		t.Fatalf("first event %v", ev.Type)
	}
	q.Modify(&QPAttr{State: QPStateInit, PortNum: 1}, rcInitMask)
	require.NoError(t, q.Modify(&QPAttr{State: QPStateErr}, QPAttrState))
	ev, err := d.GetAsyncEvent(ctx)
	if err != nil || ev.Type != EventQPLastWQEReached || ev.QP != q {
		t.Errorf("event %+v, %v; want last WQE reached on the QP", ev, err)
	}
	if srq.Len() != 2 {
		t.Errorf("entering ERR touched the SRQ: Len %d", srq.Len())
	}
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
	_, err = x.pd.CreateAH(&AHAttr{IsGlobal: true, PortNum: 1, GRH: GlobalRoute{DGID: dgid, SGIDIndex: 0}})
	assert.ErrorIs(t, err, ErrInvalidGIDIndex, "AH from the link-local GID")
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
	if _, err := q.BindMW(w2, MWBindInfo{MR: x.mr, Length: 8}); !errors.Is(err, ErrMWType) {
		t.Errorf("BindMW of a type 2 window: %v", err)
	}
	if _, err := q.BindMW(nil, MWBindInfo{}); !errors.Is(err, ErrNilObject) {
		t.Errorf("BindMW(nil): %v", err)
	}
	w1, _ := x.pd.AllocMW(MWType1)
	if _, err := q.BindMW(w1, MWBindInfo{MR: x.mr, Addr: x.mr.Addr(), Length: 8, Access: AccessRemoteRead}); !errors.Is(err, ErrInvalidState) {
		t.Errorf("BindMW on a RESET QP: %v", err)
	}
}
