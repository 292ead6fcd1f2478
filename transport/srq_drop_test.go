package transport

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

// wantRecvWCs checks the receive completions waiting, by WR ID and status, in order.
func wantRecvWCs(t *testing.T, env *rspEnv, want ...cq.WC) {
	t.Helper()
	got := env.poll()
	require.Len(t, got, len(want), "completions %+v", got)
	for i, w := range want {
		assert.Equal(t, w.WRID, got[i].WRID, "completion %d", i)
		assert.Equal(t, w.Status, got[i].Status, "completion %d (WR %d)", i, got[i].WRID)
	}
}

// TestUCSRQDroppedMessageCompletesWQE: a UC message dropped after it took a receive WQE from an
// SRQ completes that WQE in error (IBTA class E) instead of keeping it for the next message, which
// would hide a WQE of a queue other QPs share behind this QP's next message. The QP stays in RTS.
func TestUCSRQDroppedMessageCompletesWQE(t *testing.T) {
	env := newRspEnv(t, rspOptions{typ: qp.TypeUC, access: mr.AccessLocalWrite | mr.AccessRemoteWrite, rqPSN: 10, srq: true})
	env.postRecv(1, 1024)
	env.postRecv(2, 1024)
	env.postRecv(3, 4)
	env.postRecv(4, 64)
	env.postRecv(5, 1024)
	msg := rspPattern(3*rspMTUB, 2)

	// A MIDDLE is lost: the LAST reveals it and the message's WQE completes at once.
	rspWantNone(t, env.deliver(env.req(packet.UCSendFirst, 10, false, msg[:rspMTUB], nil)))
	rspWantNone(t, env.deliver(env.req(packet.UCSendLast, 12, false, msg[2*rspMTUB:], nil)))
	wantRecvWCs(t, env, cq.WC{WRID: 1, Status: cq.WCRemInvReqErr})

	// The next message takes the next WQE.
	next := rspPattern(rspMTUB+1, 9)
	env.deliver(env.req(packet.UCSendFirst, 20, false, next[:rspMTUB], nil))
	env.deliver(env.req(packet.UCSendLast, 21, false, next[rspMTUB:], nil))
	wantRecvWCs(t, env, cq.WC{WRID: 2, Status: cq.WCSuccess})

	// Too long for its WQE: LOC_LEN_ERR, the WQE is not reused.
	env.deliver(env.req(packet.UCSendOnly, 22, false, []byte("12345"), nil))
	wantRecvWCs(t, env, cq.WC{WRID: 3, Status: cq.WCLocLenErr})

	// A WRITE with immediate that fails its R_Key check after taking a WQE: REM_ACCESS_ERR.
	m, buf := env.region(64, remoteAccess)
	env.deliver(env.req(packet.UCRDMAWriteOnlyWithImmediate, 23, false, []byte("x"), rspRETH(m.IOVA(), m.RKey()+1, 1)))
	wantRecvWCs(t, env, cq.WC{WRID: 4, Status: cq.WCRemAccessErr})
	assert.Zero(t, buf[0], "memory written through a bad R_Key")

	// A FIRST arriving while a message is open ends it the same way, and starts its own.
	env.deliver(env.req(packet.UCSendFirst, 24, false, msg[:rspMTUB], nil))
	env.postRecv(6, 64)
	env.deliver(env.req(packet.UCSendOnly, 25, false, []byte("s"), nil))
	wantRecvWCs(t, env, cq.WC{WRID: 5, Status: cq.WCRemInvReqErr}, cq.WC{WRID: 6, Status: cq.WCSuccess})

	rspWantState(t, env.q, qp.StateRTS)
	assert.Zero(t, env.q.SRQ().Len(), "WQEs left in the SRQ")
}

// TestUDSRQTooLongCompletesWQE: a datagram too long for the SRQ WQE it took completes that WQE
// with LOC_LEN_ERR; the next datagram gets the next WQE and the QP stays in RTS.
func TestUDSRQTooLongCompletesWQE(t *testing.T) {
	env := newRspEnv(t, rspOptions{typ: qp.TypeUD, srq: true})
	env.postRecv(1, packet.GRHSize+4)
	env.postRecv(2, packet.GRHSize+64)
	rspWantNone(t, env.deliver(udSend(env, udQKey, []byte("12345"), false)))
	wantRecvWCs(t, env, cq.WC{WRID: 1, Status: cq.WCLocLenErr})
	rspWantNone(t, env.deliver(udSend(env, udQKey, []byte("1234"), false)))
	wantRecvWCs(t, env, cq.WC{WRID: 2, Status: cq.WCSuccess})
	assert.Equal(t, uint64(1), env.e.Counters().Load(counter.RcvdTooLong))
	rspWantState(t, env.q, qp.StateRTS)
}

// TestUDNoSRQTooLongKeepsWQE: without an SRQ the dropped datagram's WQE takes the next one
// (IBTA class D).
func TestUDNoSRQTooLongKeepsWQE(t *testing.T) {
	env := newRspEnv(t, rspOptions{typ: qp.TypeUD})
	env.postRecv(1, packet.GRHSize+4)
	rspWantNone(t, env.deliver(udSend(env, udQKey, []byte("12345"), false)))
	wantRecvWCs(t, env)
	rspWantNone(t, env.deliver(udSend(env, udQKey, []byte("1234"), false)))
	wantRecvWCs(t, env, cq.WC{WRID: 1, Status: cq.WCSuccess})
}
