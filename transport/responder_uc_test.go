package transport

import (
	"bytes"
	"testing"

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
	if !bytes.Equal(bufs[0][:len(msg)], msg) {
		t.Fatal("data")
	}
	if wcs := env.poll(); len(wcs) != 1 || wcs[0].ByteLen != uint32(len(msg)) || wcs[0].ImmData != 77 {
		t.Fatalf("completions %+v", wcs)
	}
	m, buf := env.region(64, remoteAccess)
	env.postRecv(2, 8)
	rspWantNone(t, env.deliver(env.req(packet.UCRDMAWriteOnlyWithImmediate, 12, false, []byte("uc"), rspRETH(m.IOVA(), m.RKey(), 2))))
	if string(buf[:2]) != "uc" {
		t.Fatal("write data")
	}
	if wcs := env.poll(); len(wcs) != 1 || wcs[0].Opcode != cq.OpcodeRecvRDMAWithImm || wcs[0].ByteLen != 2 {
		t.Fatalf("completions %+v", wcs)
	}
}

func TestUCGapDropsMessageAndReusesWQE(t *testing.T) {
	env := newUC(t)
	bufs := env.postRecv(1, 1024)
	env.postRecv(2, 1024)
	msg := rspPattern(3*rspMTUB, 2)
	env.deliver(env.req(packet.UCSendFirst, 10, false, msg[:rspMTUB], nil))
	// PSN 11 (the MIDDLE) is lost: the LAST is dropped, nothing completes.
	env.deliver(env.req(packet.UCSendLast, 12, false, msg[2*rspMTUB:], nil))
	if wcs := env.poll(); len(wcs) != 0 {
		t.Fatalf("a broken message completed: %+v", wcs)
	}
	if env.e.Counters().Load(counter.OutOfSeqRequest) != 1 {
		t.Fatal("gap not counted")
	}
	// The next message starts with FIRST at a later PSN and lands in the same (first) WQE.
	next := rspPattern(rspMTUB+1, 9)
	env.deliver(env.req(packet.UCSendFirst, 20, false, next[:rspMTUB], nil))
	env.deliver(env.req(packet.UCSendLast, 21, false, next[rspMTUB:], nil))
	wcs := env.poll()
	if len(wcs) != 1 || wcs[0].WRID != 1 || wcs[0].ByteLen != uint32(len(next)) {
		t.Fatalf("completions %+v", wcs)
	}
	if !bytes.Equal(bufs[0][:len(next)], next) {
		t.Fatal("data")
	}
	// A MIDDLE without FIRST is dropped too; the QP stays usable.
	env.deliver(env.req(packet.UCSendMiddle, 22, false, msg[:rspMTUB], nil))
	env.deliver(env.req(packet.UCSendOnly, 23, false, []byte("z"), nil))
	if wcs := env.poll(); len(wcs) != 1 || wcs[0].WRID != 2 || wcs[0].ByteLen != 1 {
		t.Fatalf("completions %+v", wcs)
	}
	rspWantState(t, env.q, qp.StateRTS)
}

func TestUCErrorsAreSilent(t *testing.T) {
	env := newUC(t)
	c := env.e.Counters()
	// No receive WQE: the whole message is dropped.
	env.deliver(env.req(packet.UCSendFirst, 10, false, rspPattern(rspMTUB, 1), nil))
	env.deliver(env.req(packet.UCSendLast, 11, false, []byte("x"), nil))
	if c.Load(counter.RcvdNoRecvWQE) != 1 {
		t.Fatal("no-WQE drop not counted")
	}
	// Bad R_Key: dropped, memory untouched, no NAK.
	m, buf := env.region(64, remoteAccess)
	rspWantNone(t, env.deliver(env.req(packet.UCRDMAWriteOnly, 12, false, []byte("x"), rspRETH(m.IOVA(), m.RKey()+1, 1))))
	if c.Load(counter.RcvdBadAccess) != 1 || buf[0] != 0 {
		t.Fatal("bad R_Key")
	}
	// Too long for the receive WQE: dropped, the WQE serves the next message.
	env.postRecv(3, 4)
	rspWantNone(t, env.deliver(env.req(packet.UCSendOnly, 13, false, []byte("12345"), nil)))
	if c.Load(counter.RcvdTooLong) != 1 || len(env.poll()) != 0 {
		t.Fatal("too-long message")
	}
	env.deliver(env.req(packet.UCSendOnly, 14, false, []byte("1234"), nil))
	if wcs := env.poll(); len(wcs) != 1 || wcs[0].WRID != 3 {
		t.Fatalf("completions %+v", wcs)
	}
	// RC-only operations are not UC opcodes at all; an RC opcode is dropped.
	env.deliver(env.req(packet.RCRDMAReadRequest, 15, false, nil, rspRETH(m.IOVA(), m.RKey(), 8)))
	if c.Load(counter.RcvdBadOpcode) != 1 {
		t.Fatal("RC opcode on UC")
	}
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
	if len(wcs) != 1 || wcs[0].WRID != 1 || wcs[0].ByteLen != uint32(len(next)) || !bytes.Equal(bufs[0][:len(next)], next) {
		t.Fatalf("completions %+v", wcs)
	}
	// A SEND cut short by an RDMA WRITE: the WRITE lands, the SEND's WQE serves the next SEND.
	m, wbuf := env.region(64, remoteAccess)
	env.deliver(env.req(packet.UCSendFirst, 14, false, old[:rspMTUB], nil))
	env.deliver(env.req(packet.UCRDMAWriteOnly, 15, false, []byte("w"), rspRETH(m.IOVA(), m.RKey(), 1)))
	env.deliver(env.req(packet.UCSendOnly, 16, false, []byte("s"), nil))
	wcs = env.poll()
	if len(wcs) != 1 || wcs[0].WRID != 2 || wcs[0].ByteLen != 1 || wbuf[0] != 'w' {
		t.Fatalf("completions %+v", wcs)
	}
	rspWantState(t, env.q, qp.StateRTS)
}
