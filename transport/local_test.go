package transport

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/qp"
)

// TestLocalOpsFastRegAndInvalidate registers a fast-register region with REG_MR on the target
// side, lets the peer write into it, invalidates it with LOCAL_INV and checks that the next write
// fails with a remote access error that takes the writer to ERR and flushes what follows.
func TestLocalOpsFastRegAndInvalidate(t *testing.T) {
	x := newE2E(t, hQPOptions{})
	d := x.b.d
	m, err := d.mem.AllocMR(d.pd, 4)
	require.NoError(t, err)
	pages := [][]byte{make([]byte, 4096), make([]byte, 4096)}
	key := mr.IncKey(m.LKey())
	x.b.post(qp.SendWR{ID: 100, Opcode: qp.WRRegMR, Flags: qp.SendSignaled, RegMR: mr.FastReg{
		Key: key, Access: mr.AccessLocalWrite | mr.AccessRemoteWrite, IOVA: 0x10000, Length: 6000,
		PageSize: 4096, Offset: 100, Pages: pages,
	}})
	x.h.settle(time.Second)
	wcs := x.b.pollSend()
	require.Len(t, wcs, 1, "REG_MR completions")
	wantWC(t, wcs[0], 100, cq.WCSuccess, cq.OpcodeRegMR)

	wc := x.one(qp.SendWR{ID: 1, Opcode: qp.WRRDMAWrite, SGList: []mr.SGE{x.aBuf.sge(0, 5000)},
		RDMA: qp.RDMAInfo{RemoteAddr: 0x10000 + 10, RKey: key}})
	wantWC(t, wc, 1, cq.WCSuccess, cq.OpcodeRDMAWrite)
	got := append(append([]byte(nil), pages[0][110:]...), pages[1][:5000-(4096-110)]...)
	require.True(t, bytes.Equal(got, x.aBuf.buf[:5000]), "write through the fast-registered key landed wrong")

	x.b.post(qp.SendWR{ID: 101, Opcode: qp.WRLocalInv, Flags: qp.SendSignaled, InvalidateRKey: key})
	x.h.settle(time.Second)
	wcs = x.b.pollSend()
	require.Len(t, wcs, 1, "LOCAL_INV completions")
	wantWC(t, wcs[0], 101, cq.WCSuccess, cq.OpcodeLocalInv)

	x.a.post(
		qp.SendWR{ID: 2, Opcode: qp.WRRDMAWrite, SGList: []mr.SGE{x.aBuf.sge(0, 10)}, RDMA: qp.RDMAInfo{RemoteAddr: 0x10000, RKey: key}},
		qp.SendWR{ID: 3, Opcode: qp.WRSend, Flags: qp.SendSignaled},
	)
	x.h.settle(time.Second)
	wcs = x.a.pollSend()
	require.Len(t, wcs, 2)
	wantWC(t, wcs[0], 2, cq.WCRemAccessErr, 0)
	wantWC(t, wcs[1], 3, cq.WCWRFlushErr, 0)
	require.Equal(t, qp.StateErr, x.a.q.State(), "requester state")
}

// TestLocalOpsBindMWAndSendWithInv binds a type 2 window with BIND_MW, writes through it, then
// invalidates it remotely with SEND_WITH_INV; a write through it afterwards fails.
func TestLocalOpsBindMWAndSendWithInv(t *testing.T) {
	x := newE2E(t, hQPOptions{})
	d := x.b.d
	target := d.region(8192, mr.AccessLocalWrite|mr.AccessRemoteWrite|mr.AccessMWBind)
	w, err := d.mem.AllocMW(d.pd, mr.MWType2)
	require.NoError(t, err)
	key := mr.IncKey(w.RKey())
	x.b.post(qp.SendWR{ID: 200, Opcode: qp.WRBindMW, Flags: qp.SendSignaled, BindMW: mr.Bind{
		MWKey: w.RKey(), NewKey: key, MRKey: target.mr.LKey(), Addr: target.mr.IOVA() + 1000, Length: 2000,
		Access: mr.AccessRemoteWrite,
	}})
	x.h.settle(time.Second)
	wcs := x.b.pollSend()
	require.Len(t, wcs, 1, "BIND_MW completions")
	wantWC(t, wcs[0], 200, cq.WCSuccess, cq.OpcodeBindMW)
	wc := x.one(qp.SendWR{ID: 1, Opcode: qp.WRRDMAWrite, SGList: []mr.SGE{x.aBuf.sge(0, 2000)},
		RDMA: qp.RDMAInfo{RemoteAddr: target.mr.IOVA() + 1000, RKey: key}})
	wantWC(t, wc, 1, cq.WCSuccess, cq.OpcodeRDMAWrite)
	require.True(t, bytes.Equal(target.buf[1000:3000], x.aBuf.buf[:2000]), "write through the window landed wrong")

	recv := x.b.d.region(64, 0)
	x.b.postRecv(9, recv.sge(0, 64))
	wc = x.one(qp.SendWR{ID: 2, Opcode: qp.WRSendWithInv, SGList: []mr.SGE{x.aBuf.sge(0, 5)}, InvalidateRKey: key})
	wantWC(t, wc, 2, cq.WCSuccess, cq.OpcodeSend)
	rw := x.b.pollRecv()
	require.Len(t, rw, 1, "recv completions")
	require.NotZero(t, rw[0].WCFlags&cq.WCFlagWithInv, "recv flags %v without WITH_INV", rw[0].WCFlags)
	require.Equal(t, key, rw[0].InvalidatedRKey, "invalidated rkey")
	require.Equal(t, uint32(5), rw[0].ByteLen, "recv byte_len")
	require.False(t, w.Bound(), "window still bound after SEND_WITH_INV")
	wc = x.one(qp.SendWR{ID: 3, Opcode: qp.WRRDMAWrite, SGList: []mr.SGE{x.aBuf.sge(0, 8)},
		RDMA: qp.RDMAInfo{RemoteAddr: target.mr.IOVA() + 1000, RKey: key}})
	wantWC(t, wc, 3, cq.WCRemAccessErr, 0)
}

// TestLocalOpsOrderAndErrors checks that local operations complete in posting order behind the
// sends before them, that a failing one completes with its status and moves the QP to ERR, and
// that everything after it is flushed.
func TestLocalOpsOrderAndErrors(t *testing.T) {
	x := newE2E(t, hQPOptions{})
	for i := range 3 {
		x.b.postRecv(uint64(i), x.b.d.region(4096, 0).sge(0, 4096))
	}
	m, err := x.a.d.mem.AllocMR(x.a.d.pd, 1)
	require.NoError(t, err)
	key := mr.IncKey(m.LKey())
	sig := qp.SendSignaled
	x.a.post(
		qp.SendWR{ID: 1, Opcode: qp.WRSend, Flags: sig, SGList: []mr.SGE{x.aBuf.sge(0, 3000)}},
		qp.SendWR{ID: 2, Opcode: qp.WRRegMR, Flags: sig, RegMR: mr.FastReg{Key: key, Access: mr.AccessLocalWrite,
			IOVA: 0, Length: 4096, PageSize: 4096, Pages: [][]byte{make([]byte, 4096)}}},
		qp.SendWR{ID: 3, Opcode: qp.WRSend, Flags: sig, SGList: []mr.SGE{x.aBuf.sge(0, 10)}},
		// A second REG_MR of a region that is not free fails with a local QP operation error.
		qp.SendWR{ID: 4, Opcode: qp.WRRegMR, Flags: sig, RegMR: mr.FastReg{Key: key, Access: mr.AccessLocalWrite,
			IOVA: 0, Length: 4096, PageSize: 4096, Pages: [][]byte{make([]byte, 4096)}}},
		qp.SendWR{ID: 5, Opcode: qp.WRSend, Flags: sig, SGList: []mr.SGE{x.aBuf.sge(0, 10)}},
		qp.SendWR{ID: 6, Opcode: qp.WRLocalInv, Flags: sig, InvalidateRKey: key},
	)
	x.h.settle(time.Second)
	wcs := x.a.pollSend()
	want := []struct {
		id uint64
		st cq.Status
		op cq.Opcode
	}{
		{1, cq.WCSuccess, cq.OpcodeSend}, {2, cq.WCSuccess, cq.OpcodeRegMR}, {3, cq.WCSuccess, cq.OpcodeSend},
		{4, cq.WCLocQPOpErr, 0}, {5, cq.WCWRFlushErr, 0}, {6, cq.WCWRFlushErr, 0},
	}
	require.Len(t, wcs, len(want))
	for i, w := range want {
		wantWC(t, wcs[i], w.id, w.st, w.op)
	}
	require.Equal(t, qp.StateErr, x.a.q.State())
	require.Len(t, x.b.pollRecv(), 2, "messages the peer received")
}

// TestLocalProtectionErrors checks the statuses of work requests whose local buffers fail and
// the state the QP goes to: ERR for RC, SQE for UC.
func TestLocalProtectionErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		typ   qp.Type
		wr    func(x *e2e) qp.SendWR
		st    cq.Status
		state qp.State
	}{
		{"rc send bad lkey", qp.TypeRC, func(x *e2e) qp.SendWR {
			s := x.aBuf.sge(0, 100)
			s.LKey ^= 0x55
			return qp.SendWR{Opcode: qp.WRSend, SGList: []mr.SGE{s}}
		}, cq.WCLocProtErr, qp.StateErr},
		{"rc send out of range", qp.TypeRC, func(x *e2e) qp.SendWR {
			return qp.SendWR{Opcode: qp.WRSend, SGList: []mr.SGE{x.aBuf.sge(e2eSize-10, 100)}}
		}, cq.WCLocProtErr, qp.StateErr},
		{"rc read into read-only memory", qp.TypeRC, func(x *e2e) qp.SendWR {
			ro := x.a.d.region(100, mr.AccessRemoteRead)
			return qp.SendWR{Opcode: qp.WRRDMARead, SGList: []mr.SGE{ro.sge(0, 100)},
				RDMA: qp.RDMAInfo{RemoteAddr: x.bBuf.mr.IOVA(), RKey: x.bBuf.mr.RKey()}}
		}, cq.WCLocProtErr, qp.StateErr},
		{"uc send bad lkey", qp.TypeUC, func(x *e2e) qp.SendWR {
			s := x.aBuf.sge(0, 100)
			s.LKey = 0
			return qp.SendWR{Opcode: qp.WRSend, SGList: []mr.SGE{s}}
		}, cq.WCLocProtErr, qp.StateSQE},
		{"uc send with invalidate", qp.TypeUC, func(x *e2e) qp.SendWR {
			return qp.SendWR{Opcode: qp.WRSendWithInv, InvalidateRKey: 0x1234}
		}, cq.WCLocQPOpErr, qp.StateSQE},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := newE2E(t, hQPOptions{typ: tc.typ})
			wr := tc.wr(x)
			wr.ID = 77
			x.a.post(wr, qp.SendWR{ID: 78, Opcode: qp.WRSend})
			x.h.settle(time.Second)
			wcs := x.a.pollSend()
			require.Len(t, wcs, 2)
			wantWC(t, wcs[0], 77, tc.st, 0)
			wantWC(t, wcs[1], 78, cq.WCWRFlushErr, 0)
			require.Equal(t, tc.state, x.a.q.State())
		})
	}
}
