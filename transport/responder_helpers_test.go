package transport

import (
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

// rspEnv is one responder under test: a QP brought to RTR (or RTS) on its own device, fed with
// request packets built by hand, whose outputs, memory and completions the tests inspect.
type rspEnv struct {
	t      testing.TB
	mem    *mr.Table
	pd     *mr.PD
	qps    *qp.Table
	q      *qp.QP
	e      *Engine
	dev    *Env
	recvCQ *cq.CQ
	sendCQ *cq.CQ
	from   packet.Envelope // how requests arrive: from the peer to the local address
	out    Output
	now    time.Time
	peer   uint32 // the peer's QPN
	events []rspEvent
}

// rspEvent is an asynchronous event with the number of receive completions waiting when it came.
type rspEvent struct {
	typ     qp.EventType
	recvWCs int
}

// HandleEvent records an asynchronous event.
func (env *rspEnv) HandleEvent(e qp.Event) {
	env.events = append(env.events, rspEvent{typ: e.Type, recvWCs: env.recvCQ.Len()})
}

var (
	rspLocal4 = netip.MustParseAddr("10.0.0.1")
	rspPeer4  = netip.MustParseAddr("10.0.0.2")
	rspLocal6 = netip.MustParseAddr("fd00::1")
	rspPeer6  = netip.MustParseAddr("fd00::2")
)

const (
	rspMTU     = qp.MTU256
	rspMTUB    = 256
	rspPeerQPN = 0x123
	rspRNRCode = 14
)

// rspOptions configure newRspEnv.
type rspOptions struct {
	typ         qp.Type
	access      mr.Access
	rqPSN       uint32
	maxDestRd   uint8
	v6          bool
	srq         bool
	state       qp.State // RTR or RTS (default RTS)
	qkey        uint32
	recvCQDepth int
	mtu         qp.MTU // default rspMTU
}

func newRspEnv(t testing.TB, o rspOptions) *rspEnv {
	t.Helper()
	if o.typ == 0 {
		o.typ = qp.TypeRC
	}
	if o.state == 0 {
		o.state = qp.StateRTS
	}
	if o.mtu == 0 {
		o.mtu = rspMTU
	}
	if o.recvCQDepth == 0 {
		o.recvCQDepth = 64
	}
	env := &rspEnv{t: t, mem: mr.NewTable(), now: time.Unix(1000, 0), peer: rspPeerQPN}
	var err error
	env.pd, err = env.mem.AllocPD()
	require.NoError(t, err)
	env.recvCQ, err = cq.New(o.recvCQDepth, cq.Options{})
	require.NoError(t, err)
	env.sendCQ, err = cq.New(64, cq.Options{})
	require.NoError(t, err)
	env.qps = qp.NewTable(qp.Config{Limits: qp.DefaultLimits(), Events: env})
	init := &qp.InitAttr{
		SendCQ: env.sendCQ, RecvCQ: env.recvCQ, Type: o.typ,
		Cap: qp.Caps{MaxSendWR: 16, MaxRecvWR: 16, MaxSendSGE: 4, MaxRecvSGE: 4},
	}
	if o.srq {
		init.SRQ, err = env.qps.CreateSRQ(env.pd, &qp.SRQInitAttr{Attr: qp.SRQAttr{MaxWR: 16, MaxSGE: 4}})
		require.NoError(t, err)
	}
	if o.typ == qp.TypeGSI {
		init.Type = qp.TypeGSI
	}
	env.q, err = env.qps.CreateQP(env.pd, init)
	require.NoError(t, err)

	local, peer := rspLocal4, rspPeer4
	if o.v6 {
		local, peer = rspLocal6, rspPeer6
	}
	env.dev = &Env{
		Mem: env.mem,
		SourceAddr: func(i uint8) (netip.Addr, bool) {
			return local, i == 0
		},
	}
	env.e = New(env.dev, env.q)
	env.from = packet.Envelope{
		Src: netip.AddrPortFrom(peer, 0xC123), Dst: netip.AddrPortFrom(local, packet.UDPPort),
		TrafficClass: 0x10, HopLimit: 64,
	}
	env.out.Alloc = func() []byte { return make([]byte, 0, MaxPacketSize) }

	switch o.typ {
	case qp.TypeRC, qp.TypeUC:
		require.NoError(t, env.q.Modify(&qp.Attr{State: qp.StateInit, PortNum: 1, AccessFlags: o.access},
			qp.AttrState|qp.AttrPKeyIndex|qp.AttrPort|qp.AttrAccessFlags))
		a := &qp.Attr{
			State: qp.StateRTR, PathMTU: o.mtu, DestQPNum: rspPeerQPN, RQPSN: o.rqPSN,
			MaxDestRdAtomic: o.maxDestRd, MinRNRTimer: rspRNRCode,
			AHAttr: qp.AddressVector{IsGlobal: true, PortNum: 1, GRH: qp.GlobalRoute{
				DGID: peer.As16(), HopLimit: 64, TrafficClass: 0,
			}},
		}
		mask := qp.AttrState | qp.AttrAV | qp.AttrPathMTU | qp.AttrDestQPN | qp.AttrRQPSN
		if o.typ == qp.TypeRC {
			mask |= qp.AttrMaxDestRdAtomic | qp.AttrMinRNRTimer
		}
		require.NoError(t, env.q.Modify(a, mask))
		if o.state == qp.StateRTS {
			rts := &qp.Attr{State: qp.StateRTS, SQPSN: 0x777, Timeout: 14, RetryCnt: 7, RNRRetry: 7, MaxRdAtomic: 4}
			mask := qp.AttrState | qp.AttrSQPSN
			if o.typ == qp.TypeRC {
				mask |= qp.AttrTimeout | qp.AttrRetryCnt | qp.AttrRNRRetry | qp.AttrMaxQPRdAtomic
			}
			require.NoError(t, env.q.Modify(rts, mask))
		}
	default:
		if o.qkey == 0 {
			o.qkey = 0x11111111
		}
		init := &qp.Attr{State: qp.StateInit, PortNum: 1, QKey: o.qkey}
		mask := qp.AttrState | qp.AttrPKeyIndex | qp.AttrQKey
		if o.typ == qp.TypeUD {
			mask |= qp.AttrPort
		}
		require.NoError(t, env.q.Modify(init, mask))
		require.NoError(t, env.q.Modify(&qp.Attr{State: qp.StateRTR}, qp.AttrState))
		if o.state == qp.StateRTS {
			require.NoError(t, env.q.Modify(&qp.Attr{State: qp.StateRTS, SQPSN: 1}, qp.AttrState|qp.AttrSQPSN))
		}
	}
	return env
}

// region registers a fresh zeroed buffer of n bytes with the given access.
func (env *rspEnv) region(n int, access mr.Access) (*mr.MR, []byte) {
	env.t.Helper()
	buf := make([]byte, n)
	m, err := env.mem.RegMR(env.pd, buf, access)
	require.NoError(env.t, err)
	return m, buf
}

// postRecv posts a receive WQE with one SGE per buffer length, each in its own region, and
// returns the buffers.
func (env *rspEnv) postRecv(id uint64, lens ...int) [][]byte {
	env.t.Helper()
	var sges []mr.SGE
	var bufs [][]byte
	for _, n := range lens {
		m, b := env.region(n, mr.AccessLocalWrite)
		sges = append(sges, mr.SGE{Addr: m.IOVA(), Length: uint32(n), LKey: m.LKey()})
		bufs = append(bufs, b)
	}
	wr := []qp.RecvWR{{ID: id, SGList: sges}}
	if srq := env.q.SRQ(); srq != nil {
		require.NoError(env.t, srq.PostRecv(wr))
	} else {
		require.NoError(env.t, env.q.PostRecv(wr))
	}
	return bufs
}

// req builds a request packet to the QP.
func (env *rspEnv) req(op packet.Opcode, psn uint32, ackReq bool, payload []byte, fill func(h *packet.Headers)) *packet.Parsed {
	env.t.Helper()
	h := &packet.Headers{BTH: packet.BTHFields{
		Opcode: op, PKey: 0xFFFF, DestQP: env.q.QPN(), AckReq: ackReq, PSN: packet.PSN(psn & packet.PSNMask),
	}}
	if fill != nil {
		fill(h)
	}
	buf, err := packet.AppendPacket(nil, h, payload)
	require.NoError(env.t, err)
	var p packet.Parsed
	require.NoError(env.t, packet.Parse(buf, &p))
	return &p
}

// deliver hands p to the engine and returns the packets it produced, each parsed and with its
// ICRC and path checked.
func (env *rspEnv) deliver(p *packet.Parsed) []*packet.Parsed {
	env.t.Helper()
	env.out.Reset()
	env.e.Receive(env.now, p, env.from, &env.out)
	return env.collect()
}

// run calls Run and returns what it produced.
func (env *rspEnv) run() []*packet.Parsed {
	env.t.Helper()
	env.out.Reset()
	env.e.Run(env.now, &env.out)
	return env.collect()
}

func (env *rspEnv) collect() []*packet.Parsed {
	env.t.Helper()
	var ps []*packet.Parsed
	for _, o := range env.out.Packets {
		var p packet.Parsed
		require.NoError(env.t, packet.Parse(o.Buf, &p), "engine emitted an unparsable packet")
		ev := o.Env
		require.NoError(env.t, ev.VerifyICRC(o.Buf), "engine emitted a packet with a bad ICRC")
		require.Equal(env.t, env.from.Dst.Addr(), o.Env.Src.Addr(), "response source address")
		require.Equal(env.t, env.from.Src.Addr(), o.Env.Dst.Addr(), "response destination address")
		require.Equal(env.t, uint16(packet.UDPPort), o.Env.Dst.Port(), "response destination port")
		require.Equal(env.t, env.peer, p.BTH().DestQP(), "response destination QPN")
		require.Equal(env.t, uint16(0xFFFF), p.BTH().PKey(), "response P_Key")
		ps = append(ps, &p)
	}
	return ps
}

// poll returns every completion waiting in the receive CQ.
func (env *rspEnv) poll() []cq.WC {
	var wcs [32]cq.WC
	n := env.recvCQ.Poll(wcs[:])
	return wcs[:n]
}

// rspOpcodes returns the opcodes of ps, which say more in a failure message than the packets.
func rspOpcodes(ps []*packet.Parsed) []packet.Opcode {
	ops := make([]packet.Opcode, len(ps))
	for i, p := range ps {
		ops[i] = p.Opcode()
	}
	return ops
}

// rspWantAck checks that ps is exactly one ACKNOWLEDGE with the given syndrome, PSN and MSN.
func rspWantAck(t *testing.T, ps []*packet.Parsed, syn packet.Syndrome, psn, msn uint32) {
	t.Helper()
	require.Len(t, rspOpcodes(ps), 1, "want one ACKNOWLEDGE")
	rspWantResp(t, ps[0], packet.RCAcknowledge, psn, syn, msn)
}

// rspWantResp checks one response's opcode, PSN and AETH.
func rspWantResp(t *testing.T, p *packet.Parsed, op packet.Opcode, psn uint32, syn packet.Syndrome, msn uint32) {
	t.Helper()
	require.Equal(t, op, p.Opcode(), "opcode")
	require.Equal(t, packet.PSN(psn), p.BTH().PSN(), "opcode %#x: PSN", op)
	require.False(t, p.BTH().AckReq() || p.BTH().SolicitedEvent() || p.BTH().MigReq(), "opcode %#x with AckReq, SE or MigReq set", op)
	if a := p.AETH(); a != nil {
		require.Equal(t, syn, a.Syndrome(), "opcode %#x: AETH syndrome", op)
		require.Equal(t, msn, a.MSN(), "opcode %#x: AETH MSN", op)
	}
}

func rspWantNone(t *testing.T, ps []*packet.Parsed) {
	t.Helper()
	require.Empty(t, rspOpcodes(ps), "want no packets")
}

func rspWantState(t *testing.T, q *qp.QP, s qp.State) {
	t.Helper()
	require.Equal(t, s, q.State(), "QP state")
}

// rspPattern returns n bytes of a recognisable pattern.
func rspPattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7)
	}
	return b
}

func rspRETH(va uint64, rkey, length uint32) func(h *packet.Headers) {
	return func(h *packet.Headers) {
		h.RETH = packet.RETHFields{VirtualAddress: va, RKey: rkey, DMALength: length}
	}
}
