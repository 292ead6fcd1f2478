package transport

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

// rspAllocs measures the heap allocations of one call of step, after a warm-up that lets reusable
// buffers reach their size.
func rspAllocs(t *testing.T, env *rspEnv, step func()) {
	t.Helper()
	bufs := make([][]byte, 8)
	for i := range bufs {
		bufs[i] = make([]byte, 0, MaxPacketSize)
	}
	next := 0
	env.out.Alloc = func() []byte {
		b := bufs[next%len(bufs)]
		next++
		return b
	}
	env.out.Packets = make([]Packet, 0, 8)
	for range 3 {
		step()
	}
	require.Zero(t, testing.AllocsPerRun(200, step), "allocations per packet")
}

func TestResponderSendAllocs(t *testing.T) {
	env := newRspEnv(t, rspOptions{access: rcAccess, maxDestRd: 1})
	m, _ := env.region(4096, mr.AccessLocalWrite)
	wr := []qp.RecvWR{{ID: 1, SGList: []mr.SGE{{Addr: m.IOVA(), Length: 4096, LKey: m.LKey()}}}}
	p := env.req(packet.RCSendOnlyWithImmediate, 0, true, rspPattern(200, 1), nil)
	var wcs [4]cq.WC
	psn := packet.PSN(0)
	rspAllocs(t, env, func() {
		if err := env.q.PostRecv(wr); err != nil {
			t.Fatal(err)
		}
		p.BTH().SetPSN(psn)
		psn = psn.Add(1)
		env.out.Reset()
		env.e.Receive(env.now, p, env.from, &env.out)
		if len(env.out.Packets) != 1 || env.recvCQ.Poll(wcs[:]) != 1 || wcs[0].Status != cq.WCSuccess {
			t.Fatal("SEND not acknowledged and completed")
		}
	})
}

func TestResponderWriteAllocs(t *testing.T) {
	env := newRspEnv(t, rspOptions{access: rcAccess, maxDestRd: 1})
	m, buf := env.region(4096, remoteAccess)
	p := env.req(packet.RCRDMAWriteOnly, 0, true, rspPattern(rspMTUB, 3), rspRETH(m.IOVA(), m.RKey(), rspMTUB))
	psn := packet.PSN(0)
	rspAllocs(t, env, func() {
		p.BTH().SetPSN(psn)
		psn = psn.Add(1)
		env.out.Reset()
		env.e.Receive(env.now, p, env.from, &env.out)
		if len(env.out.Packets) != 1 || buf[1] != 3+7 {
			t.Fatal("WRITE not acknowledged and placed")
		}
	})
}

func TestResponderReadAllocs(t *testing.T) {
	env := newRspEnv(t, rspOptions{access: rcAccess, maxDestRd: 4})
	m, _ := env.region(4096, remoteAccess)
	p := env.req(packet.RCRDMAReadRequest, 0, false, nil, rspRETH(m.IOVA(), m.RKey(), 2*rspMTUB))
	psn := packet.PSN(0)
	rspAllocs(t, env, func() {
		p.BTH().SetPSN(psn)
		psn = psn.Add(2)
		env.out.Reset()
		env.e.Receive(env.now, p, env.from, &env.out)
		if len(env.out.Packets) != 2 {
			t.Fatal("READ not answered")
		}
	})
}

func TestUDReceiveAllocs(t *testing.T) {
	env := newRspEnv(t, rspOptions{typ: qp.TypeUD})
	m, _ := env.region(4096, mr.AccessLocalWrite)
	wr := []qp.RecvWR{{ID: 1, SGList: []mr.SGE{{Addr: m.IOVA(), Length: 4096, LKey: m.LKey()}}}}
	p := udSend(env, udQKey, rspPattern(100, 1), false)
	var wcs [4]cq.WC
	rspAllocs(t, env, func() {
		if err := env.q.PostRecv(wr); err != nil {
			t.Fatal(err)
		}
		env.out.Reset()
		env.e.Receive(env.now, p, env.from, &env.out)
		if env.recvCQ.Poll(wcs[:]) != 1 {
			t.Fatal("datagram not delivered")
		}
	})
}
