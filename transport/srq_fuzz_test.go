package transport

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

// FuzzReceiveSRQBurst covers the receive paths FuzzResponder does not: QPs of every type whose
// receive WQEs come from an SRQ, and packets handed over in bursts (ReceiveMore, which puts off
// ACKs and sends until the burst ends). The input is FuzzResponder's framing, with the top bit of
// a packet's length asking for ReceiveMore. Whatever arrives, every SRQ WQE stays accounted for
// (completed, still in the SRQ, or the one the responder holds for a message in progress: a WQE
// lost or used twice breaks the count), nothing is written outside the receive buffers, and the
// engine comes to rest.
func FuzzReceiveSRQBurst(f *testing.F) {
	bth := func(op packet.Opcode, psn uint32) packet.BTHFields {
		return packet.BTHFields{Opcode: op, PKey: 0xFFFF, AckReq: true, PSN: packet.PSN(psn)}
	}
	pkt := func(h *packet.Headers, payload []byte) []byte {
		b, err := packet.AppendPacket(nil, h, payload)
		require.NoError(f, err)
		return b
	}
	more := func(b []byte) []byte { // frame with the ReceiveMore bit
		return append(binary.BigEndian.AppendUint16(nil, uint16(len(b))|0x8000), b...)
	}
	f.Add(uint8(0), append(more(pkt(&packet.Headers{BTH: bth(packet.RCSendFirst, 0)}, make([]byte, rspMTUB))),
		fuzzFrame(f, pkt(&packet.Headers{BTH: bth(packet.RCSendLast, 1)}, []byte("tail")))...))
	f.Add(uint8(1), fuzzFrame(f, pkt(&packet.Headers{BTH: bth(packet.UCSendFirst, 0)}, make([]byte, rspMTUB)),
		pkt(&packet.Headers{BTH: bth(packet.UCSendLast, 2)}, []byte("gap")),
		pkt(&packet.Headers{BTH: bth(packet.UCSendOnly, 3)}, make([]byte, 600))))
	f.Add(uint8(2), fuzzFrame(f, pkt(&packet.Headers{BTH: bth(packet.UDSendOnly, 0),
		DETH: packet.DETHFields{QKey: udQKey, SrcQP: 5}}, make([]byte, 500)), time.Duration(3)))
	f.Fuzz(func(t *testing.T, typ uint8, data []byte) {
		types := [...]qp.Type{qp.TypeRC, qp.TypeUC, qp.TypeUD}
		fuzzSRQBurst(t, types[int(typ)%len(types)], data)
	})
}

func fuzzSRQBurst(t *testing.T, typ qp.Type, data []byte) {
	env := newRspEnv(t, rspOptions{typ: typ, access: rcAccess, maxDestRd: 2, srq: true})
	const guard, size, wqes = 64, 512, 3
	recv := make([]byte, 2*guard+wqes*size)
	rm, err := env.mem.RegMR(env.pd, recv[guard:guard+wqes*size], mr.AccessLocalWrite)
	require.NoError(t, err)
	for id := range uint64(wqes) {
		require.NoError(t, env.q.SRQ().PostRecv([]qp.RecvWR{{ID: id, SGList: []mr.SGE{{Addr: rm.IOVA() + id*size, Length: size, LKey: rm.LKey()}}}}))
	}
	completed := 0
	check := func() {
		t.Helper()
		completed += len(env.poll())
		held := 0
		if env.e.resp.haveWQE {
			held = 1
		}
		require.Equal(t, wqes, completed+env.q.SRQ().Len()+held,
			"SRQ WQEs: %d completed, %d in the SRQ, %d held", completed, env.q.SRQ().Len(), held)
	}
	for len(data) >= 2 {
		n := int(binary.BigEndian.Uint16(data))
		data = data[2:]
		burst := n&0x8000 != 0
		n &^= 0x8000
		if n == 0 {
			if len(data) > 0 {
				env.now = env.now.Add(time.Duration(data[0]) * time.Millisecond)
				data = data[1:]
			}
			env.run()
			check()
			continue
		}
		n = min(n, len(data))
		var p packet.Parsed
		if packet.Parse(data[:n], &p) == nil {
			if burst {
				env.deliverMore(&p)
			} else {
				env.deliver(&p)
			}
			check()
		}
		data = data[n:]
	}
	for i := 0; ; i++ {
		dl := env.e.Deadline()
		if dl.IsZero() {
			break
		}
		require.Less(t, i, 10_000, "engine still has a deadline")
		if dl.After(env.now) {
			env.now = dl
		}
		env.run()
		check()
	}
	for _, c := range [][]byte{recv[:guard], recv[len(recv)-guard:]} {
		require.Equal(t, make([]byte, guard), c, "engine wrote outside the receive buffers")
	}
}
