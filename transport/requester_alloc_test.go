package transport

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

// allocRig drives one requester by hand with pooled output buffers and prebuilt responses, so
// allocation counts cover only the engine.
type allocRig struct {
	t      *testing.T
	a, b   *hEndpoint
	out    Output
	bufs   [][]byte
	i      int
	resp   []byte
	parsed packet.Parsed
	from   packet.Envelope
}

func newAllocRig(t *testing.T) *allocRig { return newAllocRigWith(t, hQPOptions{mtu: qp.MTU1024}) }

// newAllocRigWith is newAllocRig with QPs made with o.
func newAllocRigWith(t *testing.T, o hQPOptions) *allocRig {
	h := newHarness(t)
	a, b := h.pair(o)
	r := &allocRig{t: t, a: a, b: b, resp: make([]byte, 0, MaxPacketSize),
		from: packet.Envelope{Src: netipAP(b.d.addr, 0xC001), Dst: netipAP(a.d.addr, packet.UDPPort)}}
	for range 64 {
		r.bufs = append(r.bufs, make([]byte, 0, MaxPacketSize))
	}
	r.out.Alloc = func() []byte {
		r.i++
		return r.bufs[r.i%len(r.bufs)][:0]
	}
	r.out.Packets = make([]Packet, 0, 64)
	return r
}

// respond builds a response with the given headers and payload into the rig's buffer and hands it
// to the requester's engine. It runs inside AllocsPerRun closures and benchmark loops, so it checks
// with plain ifs: testify would allocate there.
func (r *allocRig) respond(h *packet.Headers, payload []byte) {
	h.BTH.DestQP, h.BTH.PKey = r.a.q.QPN(), 0xFFFF
	buf, err := packet.AppendPacket(r.resp[:0], h, payload)
	if err != nil {
		r.t.Fatal(err)
	}
	if err := packet.Parse(buf, &r.parsed); err != nil {
		r.t.Fatal(err)
	}
	r.a.e.Receive(hStart, &r.parsed, r.from, &r.out)
}

func TestAllocsSendAndAck(t *testing.T) {
	r := newAllocRig(t)
	src := r.a.d.region(8192, 0)
	wrs := []qp.SendWR{{Opcode: qp.WRSend, Flags: qp.SendSignaled, SGList: []mr.SGE{src.sge(0, 1000), src.sge(2000, 3000)}}}
	var ack packet.Headers
	var wcs [1]cq.WC
	psn := packet.PSN(0)
	allocs := testing.AllocsPerRun(200, func() {
		if err := postSend(r.a.q, wrs); err != nil {
			t.Fatal(err)
		}
		r.out.Reset()
		r.a.e.Run(hStart, &r.out)
		if len(r.out.Packets) != 4 {
			t.Fatalf("%d packets", len(r.out.Packets))
		}
		psn = psn.Add(4)
		ack = packet.Headers{BTH: packet.BTHFields{Opcode: packet.RCAcknowledge, PSN: psn.Sub(1)},
			AETH: packet.AETHFields{Syndrome: packet.SyndromeACKUnlimited}}
		r.out.Reset()
		r.respond(&ack, nil)
		if n := r.a.scq.Poll(wcs[:]); n != 1 { // polling frees the slot for the next post
			t.Fatalf("%d completions", n)
		}
	})
	require.Zero(t, allocs, "allocations per 4-packet send and its ACK")
	require.Equal(t, psn, r.a.e.comp.psn, "completer PSN")
}

func TestAllocsReadAndAtomic(t *testing.T) {
	r := newAllocRig(t)
	dst := r.a.d.region(8192, 0)
	payload := make([]byte, 1024)
	wrs := []qp.SendWR{
		{Opcode: qp.WRRDMARead, SGList: []mr.SGE{dst.sge(0, 1500), dst.sge(4000, 1500)}, RDMA: qp.RDMAInfo{RKey: 5}},
		{Opcode: qp.WRAtomicFetchAndAdd, Flags: qp.SendSignaled, SGList: []mr.SGE{dst.sge(6000, 8)}, Atomic: qp.AtomicInfo{RKey: 5, CompareAdd: 1}},
	}
	var h packet.Headers
	var wcs [1]cq.WC
	psn := packet.PSN(0)
	allocs := testing.AllocsPerRun(200, func() {
		if err := postSend(r.a.q, wrs); err != nil {
			t.Fatal(err)
		}
		r.out.Reset()
		r.a.e.Run(hStart, &r.out)
		if len(r.out.Packets) != 2 {
			t.Fatalf("%d packets", len(r.out.Packets))
		}
		aeth := packet.AETHFields{Syndrome: packet.SyndromeACKUnlimited}
		for i, op := range []packet.Opcode{packet.RCRDMAReadResponseFirst, packet.RCRDMAReadResponseMiddle, packet.RCRDMAReadResponseLast} {
			h = packet.Headers{BTH: packet.BTHFields{Opcode: op, PSN: psn.Add(uint32(i))}, AETH: aeth}
			n := 1024
			if i == 2 {
				n = 3000 - 2048
			}
			r.respond(&h, payload[:n])
		}
		h = packet.Headers{BTH: packet.BTHFields{Opcode: packet.RCAtomicAcknowledge, PSN: psn.Add(3)}, AETH: aeth,
			AtomicAckETH: packet.AtomicAckETHFields{OriginalRemoteData: 42}}
		r.respond(&h, nil)
		psn = psn.Add(4)
		if n := r.a.scq.Poll(wcs[:]); n != 1 { // the atomic's completion frees both slots
			t.Fatalf("%d completions", n)
		}
	})
	require.Zero(t, allocs, "allocations per READ and atomic with their responses")
	require.Equal(t, psn, r.a.e.comp.psn, "completer PSN")
}

func BenchmarkRequesterSend4K(b *testing.B) {
	r := newAllocRig(&testing.T{})
	src := r.a.d.region(8192, 0)
	wrs := []qp.SendWR{{Opcode: qp.WRSend, Flags: qp.SendSignaled, SGList: []mr.SGE{src.sge(0, 4096)}}}
	psn := packet.PSN(0)
	var ack packet.Headers
	var wcs [1]cq.WC
	b.SetBytes(4096)
	b.ReportAllocs()
	for b.Loop() {
		if err := postSend(r.a.q, wrs); err != nil {
			b.Fatal(err)
		}
		r.out.Reset()
		r.a.e.Run(hStart, &r.out)
		psn = psn.Add(4)
		ack = packet.Headers{BTH: packet.BTHFields{Opcode: packet.RCAcknowledge, PSN: psn.Sub(1)},
			AETH: packet.AETHFields{Syndrome: packet.SyndromeACKUnlimited}}
		r.out.Reset()
		r.respond(&ack, nil)
		if r.a.scq.Poll(wcs[:]) != 1 {
			b.Fatal("no completion")
		}
	}
}

// BenchmarkRequesterRead64K measures the requester's side of a 64 KiB RDMA READ at MTU 4096: the
// request, then the 16 responses, each checked and copied into the local buffer, the last one
// completing the work request.
func BenchmarkRequesterRead64K(b *testing.B) {
	const size, mtu = 64 << 10, 4096
	r := newAllocRigWith(&testing.T{}, hQPOptions{mtu: qp.MTU4096})
	dst := r.a.d.region(size, 0)
	wrs := []qp.SendWR{{Opcode: qp.WRRDMARead, Flags: qp.SendSignaled, SGList: []mr.SGE{dst.sge(0, size)}, RDMA: qp.RDMAInfo{RKey: 5}}}
	payload := make([]byte, mtu)
	var resp [size / mtu]packet.Parsed
	for i := range resp {
		op := packet.RCRDMAReadResponseMiddle
		switch i {
		case 0:
			op = packet.RCRDMAReadResponseFirst
		case len(resp) - 1:
			op = packet.RCRDMAReadResponseLast
		}
		h := packet.Headers{BTH: packet.BTHFields{Opcode: op, DestQP: r.a.q.QPN(), PKey: 0xFFFF},
			AETH: packet.AETHFields{Syndrome: packet.SyndromeACKUnlimited}}
		buf, err := packet.AppendPacket(nil, &h, payload)
		require.NoError(b, err)
		require.NoError(b, packet.Parse(buf, &resp[i]))
	}
	var wcs [1]cq.WC
	psn := packet.PSN(0)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		if err := postSend(r.a.q, wrs); err != nil {
			b.Fatal(err)
		}
		r.out.Reset()
		r.a.e.Run(hStart, &r.out)
		for i := range resp {
			resp[i].BTH().SetPSN(psn.Add(uint32(i)))
			if i < len(resp)-1 {
				r.a.e.ReceiveMore(hStart, &resp[i], r.from, &r.out)
			} else {
				r.a.e.Receive(hStart, &resp[i], r.from, &r.out)
			}
		}
		psn = psn.Add(uint32(len(resp)))
		if n := r.a.scq.Poll(wcs[:]); n != 1 || wcs[0].Status != cq.WCSuccess {
			b.Fatalf("%d completions, %v", n, wcs[0].Status)
		}
	}
}
