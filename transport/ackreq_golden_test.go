package transport

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

// kernelGSIHeaders are the BTH and DETH of the CM REQ kernel rxe sent on QP1, frame 2411 of
// packet/testdata's capture: UD_SEND_ONLY, P_Key 0xffff, to QP 1 with AckReq set, PSN 0, Q_Key
// 0x80010000, from QP 1.
var kernelGSIHeaders = []byte{0x64, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01, 0x80, 0x00, 0x00, 0x00,
	0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01}

// gsiPair is two devices' GSI QPs (QP1) ready to send, a on 10.0.0.1 and b on 10.0.0.2, and the
// address handle by which a reaches b; the harness keeps every packet.
func gsiPair(t *testing.T) (h *harness, a, b *hEndpoint, ah *qp.AH) {
	h = newHarness(t)
	h.keep = true
	da, db := h.device("10.0.0.1"), h.device("10.0.0.2")
	a = da.createQP(hQPOptions{typ: qp.TypeGSI, qkey: packet.GSIQKey})
	b = db.createQP(hQPOptions{typ: qp.TypeGSI, qkey: packet.GSIQKey})
	a.activateUD()
	b.activateUD()
	ah, err := da.qps.CreateAH(da.pd, &qp.AddressVector{IsGlobal: true, PortNum: 1, GRH: qp.GlobalRoute{DGID: hAV16(db.addr), SGIDIndex: 1}})
	require.NoError(t, err)
	return h, a, b, ah
}

// TestGSIHeadersMatchKernel sends a MAD-sized message on the GSI QP and checks its BTH and DETH
// byte for byte against kernel rxe's: the same opcode, P_Key, destination QP, AckReq bit, PSN,
// Q_Key and source QP.
func TestGSIHeadersMatchKernel(t *testing.T) {
	h, a, _, ah := gsiPair(t)
	a.post(qp.SendWR{ID: 1, Opcode: qp.WRSend, Flags: qp.SendSignaled, SGList: []mr.SGE{a.d.region(256, 0).sge(0, 256)},
		UD: qp.UDInfo{AH: ah, RemoteQPN: 1, RemoteQKey: packet.GSIQKey}})
	h.settle(time.Second)
	require.Len(t, h.trace, 1)
	require.Equal(t, kernelGSIHeaders, h.trace[0].buf[:packet.BTHSize+packet.DETHSize])
}

// TestUDAckReqMatchesKernel checks that a UD datagram goes with AckReq clear, as kernel rxe's do
// (every UD pingpong datagram of that capture, frame 247 the first).
func TestUDAckReqMatchesKernel(t *testing.T) {
	h := newHarness(t)
	h.keep = true
	a, b, ah := udPair(t, h, 0x11111111)
	a.post(qp.SendWR{ID: 1, Opcode: qp.WRSend, Flags: qp.SendSignaled, SGList: []mr.SGE{a.d.region(64, 0).sge(0, 64)},
		UD: qp.UDInfo{AH: ah, RemoteQPN: b.q.QPN(), RemoteQKey: 0x11111111}})
	h.settle(time.Second)
	require.Len(t, h.trace, 1)
	var pp packet.Parsed
	require.NoError(t, packet.Parse(h.trace[0].buf, &pp))
	require.False(t, pp.BTH().AckReq())
}
