package stack

import (
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/clock"
	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/netio"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
	"github.com/gorxe/gorxe/transport"
)

// tallyEngine reports the QP of every packet a worker hands it; it does nothing else.
type tallyEngine struct {
	qpn uint32
	got chan uint32
	ctr counter.Set
}

func (e *tallyEngine) Receive(_ time.Time, p *packet.Parsed, _ packet.Envelope, _ *transport.Output) {
	e.got <- p.BTH().DestQP()
}

func (e *tallyEngine) ReceiveMore(now time.Time, p *packet.Parsed, from packet.Envelope, out *transport.Output) {
	e.Receive(now, p, from, out)
}
func (e *tallyEngine) Run(time.Time, *transport.Output) {}
func (e *tallyEngine) Deadline() time.Time              { return time.Time{} }
func (e *tallyEngine) Counters() *counter.Set           { return &e.ctr }

// The drops classify counts, one per datagram it refuses.
var rxDrops = []counter.ID{counter.RcvdMalformed, counter.RcvdICRCErr, counter.RcvdBadPKey, counter.RcvdUnknownQPN, counter.RcvdNoMcastGroup}

// Addresses of the fuzzed device and its peers; fuzzRoutes picks a (source, destination) pair.
var (
	fuzzGroup4 = netip.MustParseAddr("239.1.2.3")
	fuzzGroup6 = netip.MustParseAddr("ff0e::1234")
	fuzzRoutes = [][2]netip.AddrPort{
		{netip.MustParseAddrPort("10.0.0.2:49152"), netip.MustParseAddrPort("10.0.0.1:4791")},
		{netip.MustParseAddrPort("10.0.0.2:49152"), netip.AddrPortFrom(fuzzGroup4, packet.UDPPort)},
		{netip.MustParseAddrPort("10.0.0.2:49152"), netip.MustParseAddrPort("239.9.9.9:4791")}, // no member
		{netip.MustParseAddrPort("[fd00::2]:49152"), netip.MustParseAddrPort("[fd00::1]:4791")},
		{netip.MustParseAddrPort("[fd00::2]:49152"), netip.AddrPortFrom(fuzzGroup6, packet.UDPPort)},
		{netip.MustParseAddrPort("[::ffff:10.0.0.2]:49152"), netip.MustParseAddrPort("[::ffff:10.0.0.1]:4791")},
	}
)

// FuzzReceiveRouting feeds arbitrary datagrams, on unicast and multicast routes over IPv4 and
// IPv6, with or without a correct ICRC, alone or as a coalesced run of copies, through the
// receive path: the cutting of runs into packets, classification, the QPN index, multicast
// fan-out and delivery to the workers. Nothing may panic, every datagram either is counted as
// exactly one drop or reaches exactly the QPs it is addressed to (the QP its BTH names, or one
// copy for each member of its group), through those QPs' workers, and once they are handled no
// packet holds the run's chunk.
func FuzzReceiveRouting(f *testing.F) {
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	fab := netio.NewFabric(netio.FabricConfig{Clock: clk})
	f.Cleanup(fab.Close)
	conn, err := fab.NewEndpoint(packet.UDPPort, netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("fd00::1"))
	require.NoError(f, err)
	engines := map[uint32]*tallyEngine{}
	rt := New(Config{Conn: conn, Workers: 3, Clock: clk, Log: slog.New(slog.DiscardHandler), Strict: true,
		NewEngine: func(_ *transport.Env, q *qp.QP) Engine {
			e := &tallyEngine{qpn: q.QPN(), got: make(chan uint32, 16)}
			engines[q.QPN()] = e
			return e
		}})
	f.Cleanup(func() { require.NoError(f, rt.Close()) })
	pd, err := mr.NewTable().AllocPD()
	require.NoError(f, err)
	c, err := cq.New(64, cq.Options{})
	require.NoError(f, err)
	qps := qp.NewTable(qp.Config{Limits: qp.DefaultLimits()})
	members := map[netip.Addr][]uint32{}
	var qpns []uint32
	for i, typ := range []qp.Type{qp.TypeRC, qp.TypeUC, qp.TypeUD, qp.TypeUD, qp.TypeUD} {
		q, err := qps.CreateQP(pd, &qp.InitAttr{Type: typ, SendCQ: c, RecvCQ: c, Cap: qp.Caps{MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}})
		require.NoError(f, err)
		h, err := rt.Add(q)
		require.NoError(f, err)
		qpns = append(qpns, q.QPN())
		if typ == qp.TypeUD {
			require.NoError(f, h.Attach(fuzzGroup4))
			members[fuzzGroup4] = append(members[fuzzGroup4], q.QPN())
			if i == 4 {
				require.NoError(f, h.Attach(fuzzGroup6))
				members[fuzzGroup6] = append(members[fuzzGroup6], q.QPN())
			}
		}
	}

	// Seeds: packets as peers send them, to each QP and to the groups, over every route.
	seed := func(h *packet.Headers, payload []byte, route uint8) {
		pkt, err := packet.AppendPacket(nil, h, payload)
		require.NoError(f, err)
		env := packet.Envelope{Src: fuzzRoutes[route][0], Dst: fuzzRoutes[route][1], IPFlags: packet.IPv4DontFragment}
		require.NoError(f, env.PutICRC(pkt))
		f.Add(pkt, route, false, uint8(0))
		f.Add(pkt, route, false, uint8(2))
	}
	for _, qpn := range qpns {
		seed(&packet.Headers{BTH: packet.BTHFields{Opcode: packet.RCSendOnly, PKey: packet.DefaultPKey, DestQP: qpn, PSN: 5}}, []byte("hello"), 0)
		seed(&packet.Headers{BTH: packet.BTHFields{Opcode: packet.RCRDMAWriteOnly, PKey: packet.DefaultPKey, DestQP: qpn, PSN: 6},
			RETH: packet.RETHFields{VirtualAddress: 0x1000, RKey: 7, DMALength: 4}}, []byte("data"), 3)
	}
	ud := &packet.Headers{BTH: packet.BTHFields{Opcode: packet.UDSendOnly, PKey: packet.DefaultPKey, DestQP: packet.MulticastQPN},
		DETH: packet.DETHFields{QKey: 0x11111111, SrcQP: 20}}
	for route := range uint8(len(fuzzRoutes)) {
		seed(ud, []byte("to the group"), route)
	}
	seed(&packet.Headers{BTH: packet.BTHFields{Opcode: packet.RCSendOnly, PKey: 0x8001, DestQP: qpns[0]}}, nil, 0)
	f.Add([]byte{1, 2, 3}, uint8(0), true, uint8(1))

	f.Fuzz(func(t *testing.T, data []byte, route uint8, fixICRC bool, copies uint8) {
		src, dst := fuzzRoutes[int(route)%len(fuzzRoutes)][0], fuzzRoutes[int(route)%len(fuzzRoutes)][1]
		if len(data) == 0 || len(data) > netio.CoalesceBufSize/4 {
			return // a run holds no empty datagram, and four copies must fit a chunk
		}
		data = append([]byte(nil), data...)
		if fixICRC {
			env := packet.Envelope{Src: unmapPort(src), Dst: unmapPort(dst), IPFlags: packet.IPv4DontFragment}
			_ = env.PutICRC(data) // refused for packets too short to hold one
		}
		k := int(copies%4) + 1
		run := make([][]byte, k)
		for i := range run {
			run[i] = data
		}
		x := runScratch(rt)
		chunk := x.chunks[0]
		fillRun(x, src, dst, run...)
		before := rt.Counters()
		last := rt.take(x, 0)
		batches := x.batches
		after := rt.Counters()
		var drops uint64
		for _, id := range rxDrops {
			drops += after.Get(id) - before.Get(id)
		}

		want := map[uint32]int{}
		routed := 0
		var dqpn uint32 // the destination QP the delivered packets carry
		for i, b := range batches {
			if b == nil {
				continue
			}
			for _, p := range b.pkts {
				require.Equal(t, i, p.qp.w.idx, "a packet for QP %#x went to worker %d", p.qp.qpn, i)
				want[p.qp.qpn]++
				routed++
			}
		}
		if last < 0 {
			require.Equal(t, uint64(k), drops, "a refused datagram is one drop")
			require.Zero(t, routed, "a refused datagram reached %v", want)
		} else {
			require.Zero(t, drops, "a routed datagram was also counted as a drop")
			var p packet.Parsed
			require.NoError(t, packet.Parse(data, &p))
			dqpn = p.BTH().DestQP()
			if qpn := dqpn; qpn == packet.MulticastQPN {
				group := dst.Addr().Unmap()
				require.Len(t, want, len(members[group]), "copies %v for the members %v", want, members[group])
				for _, qpn := range members[group] {
					require.Equal(t, k, want[qpn], "copies for member %#x", qpn)
				}
			} else {
				require.Equal(t, map[uint32]int{qpn: k}, want)
			}
		}
		for i, b := range batches {
			if b != nil {
				rt.workers[i].enqueue(b)
				rt.workers[i].start(i == last, false)
			}
		}
		for qpn, n := range want {
			for range n {
				select {
				case got := <-engines[qpn].got:
					require.Equal(t, dqpn, got, "QP %#x got another packet", qpn)
				case <-time.After(10 * time.Second):
					require.Failf(t, "undelivered", "QP %#x did not get its packet from its worker", qpn)
				}
			}
		}
		// A worker gives each packet back under its run lock, after the engine saw it: with
		// every run lock held, none is between the two.
		for _, w := range rt.workers {
			w.run.Lock()
		}
		refs := chunk.refs.Load()
		for _, w := range rt.workers {
			w.run.Unlock()
		}
		require.Zero(t, refs, "packets still hold the run's chunk")
		x.release()
	})
}
