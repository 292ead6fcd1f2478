package rdmacm

import (
	"net/netip"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm/mad"
)

func TestMGID(t *testing.T) {
	for _, tt := range []struct{ group, mgid string }{
		{"239.1.2.3", "::ffff:239.1.2.3"},
		{"224.0.0.1", "::ffff:224.0.0.1"},
		{"ff0e::1234", "ff0e::1234"},
		{"::ffff:239.1.2.3", "::ffff:239.1.2.3"},
	} {
		assert.Equal(t, netip.MustParseAddr(tt.mgid).As16(), [16]byte(MGID(netip.MustParseAddr(tt.group))), tt.group)
	}
}

// udQP is a UD QP in RTS with Q_Key qkey, as rdma_create_qp leaves one in the UDP port space.
type udQP struct {
	pd  *gorxe.PD
	cq  *gorxe.CQ
	qp  *gorxe.QP
	mr  *gorxe.MR
	buf []byte
}

func newUDQP(t *testing.T, dev *gorxe.Device, qkey uint32) *udQP {
	t.Helper()
	u := &udQP{buf: make([]byte, 4096)}
	var err error
	u.pd, err = dev.AllocPD()
	require.NoError(t, err)
	u.cq, err = dev.CreateCQ(16, nil)
	require.NoError(t, err)
	u.qp, err = dev.CreateQP(u.pd, &gorxe.QPInitAttr{SendCQ: u.cq, RecvCQ: u.cq, QPType: gorxe.QPTypeUD,
		Cap: gorxe.QPCap{MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}})
	require.NoError(t, err)
	require.NoError(t, u.qp.Modify(&gorxe.QPAttr{State: gorxe.QPStateInit, PortNum: 1, QKey: qkey},
		gorxe.QPAttrState|gorxe.QPAttrPKeyIndex|gorxe.QPAttrPort|gorxe.QPAttrQKey))
	require.NoError(t, u.qp.Modify(&gorxe.QPAttr{State: gorxe.QPStateRTR}, gorxe.QPAttrState))
	require.NoError(t, u.qp.Modify(&gorxe.QPAttr{State: gorxe.QPStateRTS}, gorxe.QPAttrState|gorxe.QPAttrSQPSN))
	u.mr, err = u.pd.RegMR(u.buf, gorxe.AccessLocalWrite)
	require.NoError(t, err)
	t.Cleanup(func() {
		u.qp.Destroy()
		u.mr.Dereg()
		u.cq.Destroy()
		u.pd.Dealloc()
	})
	return u
}

func (u *udQP) sge(off, n int) []gorxe.SGE {
	return []gorxe.SGE{{Addr: u.mr.Addr() + uint64(off), Length: uint32(n), LKey: u.mr.LKey()}}
}

// poll waits for one completion.
func (u *udQP) poll(t *testing.T) gorxe.WC {
	t.Helper()
	wcs := make([]gorxe.WC, 1)
	synctest.Wait()
	require.Equal(t, 1, u.cq.Poll(wcs))
	return wcs[0]
}

func TestJoinMulticast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		devs := fabricDevices(t, nil, "10.0.0.1", "10.0.0.2")
		group := netip.MustParseAddr("239.4.5.6")
		recv, send := newUDQP(t, devs[1], UDPQKey), newUDQP(t, devs[0], UDPQKey)

		rm, err := JoinMulticast(testCtx(t), devs[1], recv.qp, group, nil)
		require.NoError(t, err)
		assert.Equal(t, group, rm.Group)
		assert.Equal(t, gorxe.GID(netip.MustParseAddr("::ffff:239.4.5.6").As16()), rm.MGID)
		assert.Equal(t, uint32(0xFFFFFF), rm.QPN)
		assert.Equal(t, uint32(0x01234567), rm.QKey)
		assert.Equal(t, gorxe.AHAttr{IsGlobal: true, PortNum: 1, GRH: gorxe.GlobalRoute{DGID: rm.MGID, SGIDIndex: 1, HopLimit: 64}}, rm.AH)

		sm, err := JoinMulticast(testCtx(t), devs[0], send.qp, group, &JoinOptions{SendOnly: true})
		require.NoError(t, err)
		assert.True(t, sm.SendOnly)
		ah, err := send.pd.CreateAH(&sm.AH)
		require.NoError(t, err)
		defer ah.Destroy()

		require.NoError(t, recv.qp.PostRecv([]gorxe.RecvWR{{ID: 1, SGList: recv.sge(0, gorxe.GRHSize+100)}}))
		copy(send.buf, "hello, group")
		require.NoError(t, send.qp.PostSend([]gorxe.SendWR{{ID: 2, Opcode: gorxe.WRSendWithImm, Flags: gorxe.SendSignaled,
			ImmData: send.qp.QPN(), SGList: send.sge(0, 12), UD: gorxe.UDInfo{AH: ah, RemoteQPN: sm.QPN, RemoteQKey: sm.QKey}}}))
		assert.Equal(t, gorxe.WCSuccess, send.poll(t).Status)
		wc := recv.poll(t)
		assert.Equal(t, gorxe.WCSuccess, wc.Status)
		assert.Equal(t, send.qp.QPN(), wc.SrcQP)
		assert.Equal(t, "hello, group", string(recv.buf[40:52]))

		require.NoError(t, rm.Leave())
		require.NoError(t, sm.Leave())
		assert.ErrorIs(t, rm.Leave(), ErrLeft)
		assert.ErrorIs(t, recv.qp.DetachMcast(rm.MGID, 0), gorxe.ErrInvalidArgument, "Leave detached the QP")
	})
}

func TestJoinMulticastMisuse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		devs := fabricDevices(t, nil, "10.0.0.1")
		u := newUDQP(t, devs[0], UDPQKey)
		ctx := testCtx(t)
		_, err := JoinMulticast(ctx, devs[0], u.qp, netip.MustParseAddr("10.0.0.9"), nil)
		assert.ErrorIs(t, err, ErrAddress, "a unicast address")
		_, err = JoinMulticast(ctx, devs[0], u.qp, netip.MustParseAddr("ff0e::1"), nil)
		assert.ErrorIs(t, err, ErrAddress, "no IPv6 address on the device")
		_, err = JoinMulticast(ctx, devs[0], u.qp, netip.MustParseAddr("239.1.1.1"), &JoinOptions{Source: netip.MustParseAddr("10.0.0.7")})
		assert.ErrorIs(t, err, ErrAddress, "a source the device does not have")
		_, err = JoinMulticast(ctx, devs[0], u.qp, netip.MustParseAddr("239.1.1.1"), &JoinOptions{PortSpace: mad.PortSpaceTCP})
		assert.ErrorIs(t, err, ErrAddress, "the TCP port space")
		_, err = JoinMulticast(ctx, devs[0], nil, netip.MustParseAddr("239.1.1.1"), nil)
		assert.ErrorIs(t, err, gorxe.ErrInvalidQPType)
		m, err := JoinMulticast(ctx, devs[0], u.qp, netip.MustParseAddr("239.1.1.1"), &JoinOptions{PortSpace: mad.PortSpaceIPoIB})
		require.NoError(t, err)
		assert.Zero(t, m.QKey)
		require.NoError(t, m.Leave())
	})
}
