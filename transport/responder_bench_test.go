package transport

import (
	"testing"

	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

// newRspBench returns an RC responder with MTU 4096 whose output buffers are recycled.
func newRspBench(b *testing.B) *rspEnv {
	env := newRspEnv(b, rspOptions{access: rcAccess, maxDestRd: 16, mtu: qp.MTU4096})
	bufs := make([][]byte, 32)
	for i := range bufs {
		bufs[i] = make([]byte, 0, MaxPacketSize)
	}
	next := 0
	env.out.Alloc = func() []byte {
		next++
		return bufs[next%len(bufs)]
	}
	env.out.Packets = make([]Packet, 0, 32)
	return env
}

// BenchmarkResponderSend measures one 64-byte SEND_ONLY: receive WQE, scatter, completion, ACK.
func BenchmarkResponderSend(b *testing.B) {
	env := newRspBench(b)
	m, _ := env.region(4096, mr.AccessLocalWrite)
	wr := []qp.RecvWR{{ID: 1, SGList: []mr.SGE{{Addr: m.IOVA(), Length: 4096, LKey: m.LKey()}}}}
	p := env.req(packet.RCSendOnly, 0, true, rspPattern(64, 1), nil)
	var wcs [1]cq.WC
	psn := packet.PSN(0)
	b.SetBytes(64)
	b.ReportAllocs()
	for b.Loop() {
		if err := env.q.PostRecv(wr); err != nil {
			b.Fatal(err)
		}
		p.BTH().SetPSN(psn)
		psn = psn.Add(1)
		env.out.Reset()
		env.e.Receive(env.now, p, env.from, &env.out)
		env.recvCQ.Poll(wcs[:])
	}
}

// BenchmarkResponderWrite measures one 4096-byte RDMA WRITE_ONLY with an ACK.
func BenchmarkResponderWrite(b *testing.B) {
	env := newRspBench(b)
	m, _ := env.region(4096, remoteAccess)
	p := env.req(packet.RCRDMAWriteOnly, 0, true, rspPattern(4096, 3), rspRETH(m.IOVA(), m.RKey(), 4096))
	psn := packet.PSN(0)
	b.SetBytes(4096)
	b.ReportAllocs()
	for b.Loop() {
		p.BTH().SetPSN(psn)
		psn = psn.Add(1)
		env.out.Reset()
		env.e.Receive(env.now, p, env.from, &env.out)
	}
}

// BenchmarkResponderRead measures a 64 KiB RDMA READ: 16 response packets built from memory.
func BenchmarkResponderRead(b *testing.B) {
	env := newRspBench(b)
	m, _ := env.region(64<<10, remoteAccess)
	p := env.req(packet.RCRDMAReadRequest, 0, false, nil, rspRETH(m.IOVA(), m.RKey(), 64<<10))
	psn := packet.PSN(0)
	b.SetBytes(64 << 10)
	b.ReportAllocs()
	for b.Loop() {
		p.BTH().SetPSN(psn)
		psn = psn.Add(16)
		env.out.Reset()
		env.e.Receive(env.now, p, env.from, &env.out)
	}
}
