package transport

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

const udQKey = 0x11111111

func udSend(env *rspEnv, qkey uint32, payload []byte, imm bool) *packet.Parsed {
	op := packet.UDSendOnly
	if imm {
		op = packet.UDSendOnlyWithImmediate
	}
	return env.req(op, 42, false, payload, func(h *packet.Headers) {
		h.DETH = packet.DETHFields{QKey: qkey, SrcQP: 0x4567}
		h.ImmDt.ImmediateData = 0xa1b2c3d4
	})
}

// ipv4Checksum is the RFC 1071 checksum, computed independently of the packet package.
func ipv4Checksum(h []byte) uint16 {
	var sum uint32
	for i := 0; i < len(h); i += 2 {
		sum += uint32(h[i])<<8 | uint32(h[i+1])
	}
	for sum > 0xFFFF {
		sum = sum&0xFFFF + sum>>16
	}
	return ^uint16(sum)
}

func TestUDReceiveIPv4(t *testing.T) {
	env := newRspEnv(t, rspOptions{typ: qp.TypeUD})
	bufs := env.postRecv(8, 20, 200) // the network header straddles two SGEs
	data := rspPattern(100, 4)
	p := udSend(env, udQKey, data, true)
	rspWantNone(t, env.deliver(p))
	got := append(append([]byte{}, bufs[0]...), bufs[1]...)

	total := 20 + 8 + len(p.Bytes())
	want := make([]byte, 40)
	copy(want[20:], []byte{0x45, 0x10, byte(total >> 8), byte(total), 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 2, 10, 0, 0, 1})
	binary.BigEndian.PutUint16(want[30:], ipv4Checksum(want[20:40]))
	require.Equal(t, want, got[:40], "network header")
	require.Equal(t, data, got[40:140], "payload")
	wantWC := cq.WC{WRID: 8, Opcode: cq.OpcodeRecv, ByteLen: 140, ImmData: 0xa1b2c3d4, QPNum: env.q.QPN(),
		SrcQP: 0x4567, WCFlags: cq.WCFlagGRH | cq.WCFlagWithImm, SL: 0xa} // RoCEv2 (0x8), IPv4 (0x2)
	require.Equal(t, []cq.WC{wantWC}, env.poll(), "completions")
}

func TestUDReceiveIPv6(t *testing.T) {
	env := newRspEnv(t, rspOptions{typ: qp.TypeUD, v6: true})
	bufs := env.postRecv(1, 100)
	p := udSend(env, udQKey, []byte("hello"), false)
	env.deliver(p)
	want := make([]byte, 40)
	want[0], want[1] = 0x61, 0x00 // version 6, traffic class 0x10, flow label 0
	binary.BigEndian.PutUint16(want[4:], uint16(8+len(p.Bytes())))
	want[6], want[7] = 17, 64
	copy(want[8:], rspPeer6.AsSlice())
	copy(want[24:], rspLocal6.AsSlice())
	require.Equal(t, want, bufs[0][:40], "network header")
	require.Equal(t, "hello", string(bufs[0][40:45]), "payload")
	wcs := env.poll()
	require.Len(t, wcs, 1, "completions")
	require.Equal(t, uint32(45), wcs[0].ByteLen, "completion byte_len")
	require.Equal(t, cq.WCFlagGRH, wcs[0].WCFlags, "completion flags")
	require.Equal(t, uint8(0x9), wcs[0].SL, "completion sl: RoCEv2 (0x8), IPv6 (0x1)")
}

func TestUDDrops(t *testing.T) {
	env := newRspEnv(t, rspOptions{typ: qp.TypeUD})
	c := env.e.Counters()
	// No receive WQE.
	env.deliver(udSend(env, udQKey, []byte("x"), false))
	require.Equal(t, uint64(1), c.Load(counter.RcvdNoRecvWQE), "no-WQE drop not counted")
	bufs := env.postRecv(1, packet.GRHSize+10)
	// Wrong Q_Key.
	env.deliver(udSend(env, udQKey+1, []byte("x"), false))
	require.Equal(t, uint64(1), c.Load(counter.QKeyViolation), "Q_Key violation not counted")
	// Payload + 40 does not fit: dropped, the WQE stays for the next datagram.
	env.deliver(udSend(env, udQKey, rspPattern(11, 1), false))
	require.Equal(t, uint64(1), c.Load(counter.RcvdTooLong), "too-long drop not counted")
	require.Empty(t, env.poll(), "a dropped datagram completed")
	require.Equal(t, make([]byte, 50), bufs[0], "a dropped datagram touched the buffer")
	env.deliver(udSend(env, udQKey, rspPattern(10, 1), false))
	wcs := env.poll()
	require.Len(t, wcs, 1, "completions")
	require.Equal(t, uint64(1), wcs[0].WRID, "completion wr_id")
	require.Equal(t, uint32(50), wcs[0].ByteLen, "completion byte_len")
	// A connected-QP opcode on a UD QP is dropped.
	env.deliver(env.req(packet.RCSendOnly, 1, false, nil, nil))
	require.Equal(t, uint64(1), c.Load(counter.RcvdBadOpcode), "opcode drop not counted")
}

func TestUDMulticastAndGSI(t *testing.T) {
	env := newRspEnv(t, rspOptions{typ: qp.TypeUD})
	env.postRecv(1, 100)
	p := env.req(packet.UDSendOnly, 1, false, []byte("m"), func(h *packet.Headers) {
		h.BTH.DestQP = 0xFFFFFF
		h.DETH = packet.DETHFields{QKey: udQKey, SrcQP: 9}
	})
	env.deliver(p)
	wcs := env.poll()
	require.Len(t, wcs, 1, "multicast datagram: completions")
	require.Equal(t, uint32(9), wcs[0].SrcQP, "multicast datagram: source QPN")

	gsi := newRspEnv(t, rspOptions{typ: qp.TypeGSI, qkey: 0x1234})
	gsi.postRecv(2, 300)
	gsi.deliver(udSend(gsi, 0x1234, []byte("mad"), false))
	require.Equal(t, uint64(1), gsi.e.Counters().Load(counter.QKeyViolation), "GSI accepted a Q_Key other than 0x80010000")
	gsi.deliver(udSend(gsi, packet.GSIQKey, []byte("mad"), false))
	wcs = gsi.poll()
	require.Len(t, wcs, 1, "GSI completions")
	require.Equal(t, uint32(43), wcs[0].ByteLen, "GSI completion byte_len")
}

func TestUDSolicitedEvent(t *testing.T) {
	ch := cq.NewCompChannel(nil)
	env := newRspEnv(t, rspOptions{typ: qp.TypeUD})
	// Replace the receive CQ by one on a channel, armed for solicited completions only.
	rcq, err := cq.New(8, cq.Options{Channel: ch})
	require.NoError(t, err)
	q, err := env.qps.CreateQP(env.pd, &qp.InitAttr{SendCQ: env.sendCQ, RecvCQ: rcq, Type: qp.TypeUD,
		Cap: qp.Caps{MaxSendWR: 1, MaxRecvWR: 4, MaxRecvSGE: 1, MaxSendSGE: 1}})
	require.NoError(t, err)
	require.NoError(t, q.Modify(&qp.Attr{State: qp.StateInit, PortNum: 1, QKey: udQKey}, qp.AttrState|qp.AttrPKeyIndex|qp.AttrPort|qp.AttrQKey))
	require.NoError(t, q.Modify(&qp.Attr{State: qp.StateRTR}, qp.AttrState))
	env.q, env.e, env.recvCQ = q, New(env.dev, q), rcq
	env.postRecv(1, 64)
	env.postRecv(2, 64)
	require.NoError(t, rcq.ReqNotify(true))
	done, cancel := context.WithCancel(context.Background())
	cancel() // GetEvent on a done context polls without blocking
	env.deliver(udSend(env, udQKey, []byte("a"), false))
	_, err = ch.GetEvent(done)
	require.Error(t, err, "unsolicited completion fired a solicited-only arm")
	p := env.req(packet.UDSendOnly, 1, false, []byte("b"), func(h *packet.Headers) {
		h.BTH.SolicitedEvent = true
		h.DETH = packet.DETHFields{QKey: udQKey, SrcQP: 3}
	})
	env.deliver(p)
	c, err := ch.GetEvent(done)
	require.NoError(t, err, "solicited completion fired no event")
	require.Same(t, rcq, c, "solicited completion's event names another CQ")
}

// TestUDResetDropsHeldWQE: a UD responder keeps the receive WQE of a dropped datagram for the next
// one, but not across a RESET (even one it never saw): the queue discarded that WQE, so the next
// datagram must go to a WQE posted after the reset.
func TestUDResetDropsHeldWQE(t *testing.T) {
	env := newRspEnv(t, rspOptions{typ: qp.TypeUD})
	env.postRecv(1, packet.GRHSize+4)
	env.deliver(udSend(env, udQKey, rspPattern(10, 1), false)) // too long: WQE kept
	require.NoError(t, env.q.Modify(&qp.Attr{State: qp.StateReset}, qp.AttrState))
	require.NoError(t, env.q.Modify(&qp.Attr{State: qp.StateInit, PortNum: 1, QKey: udQKey}, qp.AttrState|qp.AttrPKeyIndex|qp.AttrQKey|qp.AttrPort))
	require.NoError(t, env.q.Modify(&qp.Attr{State: qp.StateRTR}, qp.AttrState))
	bufs := env.postRecv(2, 100)
	env.deliver(udSend(env, udQKey, rspPattern(10, 1), false))
	wcs := env.poll()
	require.Len(t, wcs, 1, "completions")
	require.Equal(t, uint64(2), wcs[0].WRID, "completion wr_id")
	require.NotZero(t, bufs[0][40], "datagram not placed in the WQE posted after the reset")
}

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

// TestUDGSIQKey checks the GSI QP's Q_Key rule: the well-known Q_Key 0x80010000 in the work request
// has the high bit set and so stands for the QP's own Q_Key.
func TestUDGSIQKey(t *testing.T) {
	h, a, b, ah := gsiPair(t)
	buf := b.d.region(256+packet.GRHSize, 0)
	b.postRecv(1, buf.sge(0, len(buf.buf)))
	a.post(qp.SendWR{ID: 1, Opcode: qp.WRSend, Flags: qp.SendSignaled, SGList: []mr.SGE{a.d.region(256, 0).sge(0, 256)},
		UD: qp.UDInfo{AH: ah, RemoteQPN: 1, RemoteQKey: packet.GSIQKey, PKeyIndex: 0}})
	h.settle(time.Second)
	require.Equal(t, uint32(1), a.q.QPN(), "GSI QPN")
	require.Len(t, a.pollSend(), 1, "GSI datagram not delivered")
	require.Len(t, b.pollRecv(), 1, "GSI datagram not delivered")
	var pp packet.Parsed
	require.NoError(t, packet.Parse(h.trace[0].buf, &pp))
	require.Equal(t, uint32(packet.GSIQKey), pp.DETH().QKey(), "GSI packet Q_Key")
	require.Equal(t, uint32(1), pp.DETH().SrcQP(), "GSI packet source QP")
	require.Equal(t, uint32(1), pp.BTH().DestQP(), "GSI packet destination QP")
	require.Equal(t, uint16(0xFFFF), pp.BTH().PKey(), "GSI packet P_Key")
}
