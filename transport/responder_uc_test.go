package transport

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

func newUC(t *testing.T) *rspEnv {
	return newRspEnv(t, rspOptions{typ: qp.TypeUC, access: mr.AccessLocalWrite | mr.AccessRemoteWrite, rqPSN: 10})
}

func TestUCSendAndWrite(t *testing.T) {
	env := newUC(t)
	bufs := env.postRecv(1, 1024)
	msg := rspPattern(rspMTUB+5, 1)
	rspWantNone(t, env.deliver(env.req(packet.UCSendFirst, 10, false, msg[:rspMTUB], nil)))
	rspWantNone(t, env.deliver(env.req(packet.UCSendLastWithImmediate, 11, true, msg[rspMTUB:], func(h *packet.Headers) {
		h.ImmDt.ImmediateData = 77
	})))
	require.Equal(t, msg, bufs[0][:len(msg)], "data")
	wcs := env.poll()
	require.Len(t, wcs, 1, "completions")
	require.Equal(t, uint32(len(msg)), wcs[0].ByteLen, "completion byte_len")
	require.Equal(t, uint32(77), wcs[0].ImmData, "completion imm_data")
	m, buf := env.region(64, remoteAccess)
	env.postRecv(2, 8)
	rspWantNone(t, env.deliver(env.req(packet.UCRDMAWriteOnlyWithImmediate, 12, false, []byte("uc"), rspRETH(m.IOVA(), m.RKey(), 2))))
	require.Equal(t, "uc", string(buf[:2]), "write data")
	wcs = env.poll()
	require.Len(t, wcs, 1, "completions")
	require.Equal(t, cq.OpcodeRecvRDMAWithImm, wcs[0].Opcode, "completion opcode")
	require.Equal(t, uint32(2), wcs[0].ByteLen, "completion byte_len")
}

func TestUCGapDropsMessageAndReusesWQE(t *testing.T) {
	env := newUC(t)
	bufs := env.postRecv(1, 1024)
	env.postRecv(2, 1024)
	msg := rspPattern(3*rspMTUB, 2)
	env.deliver(env.req(packet.UCSendFirst, 10, false, msg[:rspMTUB], nil))
	// PSN 11 (the MIDDLE) is lost: the LAST is dropped, nothing completes.
	env.deliver(env.req(packet.UCSendLast, 12, false, msg[2*rspMTUB:], nil))
	require.Empty(t, env.poll(), "a broken message completed")
	require.Equal(t, uint64(1), env.e.Counters().Load(counter.OutOfSeqRequest), "gap not counted")
	// The next message starts with FIRST at a later PSN and lands in the same (first) WQE.
	next := rspPattern(rspMTUB+1, 9)
	env.deliver(env.req(packet.UCSendFirst, 20, false, next[:rspMTUB], nil))
	env.deliver(env.req(packet.UCSendLast, 21, false, next[rspMTUB:], nil))
	wcs := env.poll()
	require.Len(t, wcs, 1, "completions")
	require.Equal(t, uint64(1), wcs[0].WRID, "completion wr_id")
	require.Equal(t, uint32(len(next)), wcs[0].ByteLen, "completion byte_len")
	require.Equal(t, next, bufs[0][:len(next)], "data")
	// A MIDDLE without FIRST is dropped too; the QP stays usable.
	env.deliver(env.req(packet.UCSendMiddle, 22, false, msg[:rspMTUB], nil))
	env.deliver(env.req(packet.UCSendOnly, 23, false, []byte("z"), nil))
	wcs = env.poll()
	require.Len(t, wcs, 1, "completions")
	require.Equal(t, uint64(2), wcs[0].WRID, "completion wr_id")
	require.Equal(t, uint32(1), wcs[0].ByteLen, "completion byte_len")
	rspWantState(t, env.q, qp.StateRTS)
}

func TestUCErrorsAreSilent(t *testing.T) {
	env := newUC(t)
	c := env.e.Counters()
	// No receive WQE: the whole message is dropped.
	env.deliver(env.req(packet.UCSendFirst, 10, false, rspPattern(rspMTUB, 1), nil))
	env.deliver(env.req(packet.UCSendLast, 11, false, []byte("x"), nil))
	require.Equal(t, uint64(1), c.Load(counter.RcvdNoRecvWQE), "no-WQE drop not counted")
	// Bad R_Key: dropped, memory untouched, no NAK.
	m, buf := env.region(64, remoteAccess)
	rspWantNone(t, env.deliver(env.req(packet.UCRDMAWriteOnly, 12, false, []byte("x"), rspRETH(m.IOVA(), m.RKey()+1, 1))))
	require.Equal(t, uint64(1), c.Load(counter.RcvdBadAccess), "bad R_Key not counted")
	require.Zero(t, buf[0], "bad R_Key: memory written")
	// Too long for the receive WQE: dropped, the WQE serves the next message.
	env.postRecv(3, 4)
	rspWantNone(t, env.deliver(env.req(packet.UCSendOnly, 13, false, []byte("12345"), nil)))
	require.Equal(t, uint64(1), c.Load(counter.RcvdTooLong), "too-long message not counted")
	require.Empty(t, env.poll(), "too-long message completed")
	env.deliver(env.req(packet.UCSendOnly, 14, false, []byte("1234"), nil))
	wcs := env.poll()
	require.Len(t, wcs, 1, "completions")
	require.Equal(t, uint64(3), wcs[0].WRID, "completion wr_id")
	// RC-only operations are not UC opcodes at all; an RC opcode is dropped.
	env.deliver(env.req(packet.RCRDMAReadRequest, 15, false, nil, rspRETH(m.IOVA(), m.RKey(), 8)))
	require.Equal(t, uint64(1), c.Load(counter.RcvdBadOpcode), "RC opcode on UC not counted")
	rspWantState(t, env.q, qp.StateRTS)
}

// TestUCFirstInMiddleDropsMessage: a FIRST or ONLY arriving in sequence while a UC message is
// still open means the rest of that message was lost at the sender (IBTA 9.8.3): the open message
// is dropped without a completion and its receive WQE takes the new message.
func TestUCFirstInMiddleDropsMessage(t *testing.T) {
	env := newUC(t)
	bufs := env.postRecv(1, 1024)
	env.postRecv(2, 1024)
	old := rspPattern(2*rspMTUB, 1)
	env.deliver(env.req(packet.UCSendFirst, 10, false, old[:rspMTUB], nil))
	env.deliver(env.req(packet.UCSendMiddle, 11, false, old[rspMTUB:], nil))
	next := rspPattern(rspMTUB+3, 7)
	env.deliver(env.req(packet.UCSendFirst, 12, false, next[:rspMTUB], nil))
	env.deliver(env.req(packet.UCSendLast, 13, false, next[rspMTUB:], nil))
	wcs := env.poll()
	require.Len(t, wcs, 1, "completions")
	require.Equal(t, uint64(1), wcs[0].WRID, "completion wr_id")
	require.Equal(t, uint32(len(next)), wcs[0].ByteLen, "completion byte_len")
	require.Equal(t, next, bufs[0][:len(next)], "data")
	// A SEND cut short by an RDMA WRITE: the WRITE lands, the SEND's WQE serves the next SEND.
	m, wbuf := env.region(64, remoteAccess)
	env.deliver(env.req(packet.UCSendFirst, 14, false, old[:rspMTUB], nil))
	env.deliver(env.req(packet.UCRDMAWriteOnly, 15, false, []byte("w"), rspRETH(m.IOVA(), m.RKey(), 1)))
	env.deliver(env.req(packet.UCSendOnly, 16, false, []byte("s"), nil))
	wcs = env.poll()
	require.Len(t, wcs, 1, "completions")
	require.Equal(t, uint64(2), wcs[0].WRID, "completion wr_id")
	require.Equal(t, uint32(1), wcs[0].ByteLen, "completion byte_len")
	require.Equal(t, byte('w'), wbuf[0], "WRITE data")
	rspWantState(t, env.q, qp.StateRTS)
}
