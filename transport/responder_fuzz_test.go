package transport

import (
	"testing"

	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

// FuzzResponder feeds arbitrary packets to RC, UC and UD responders that have memory registered
// and receives posted. Whatever arrives, the responder must not panic, must emit only packets that
// parse with a correct ICRC (rspEnv.collect checks), and must not write outside the buffers it
// was given: the guard bytes around them stay zero.
func FuzzResponder(f *testing.F) {
	seed := func(typ uint8, h *packet.Headers, payload []byte) {
		b, err := packet.AppendPacket(nil, h, payload)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(typ, b)
	}
	bth := func(op packet.Opcode, psn uint32) packet.BTHFields {
		return packet.BTHFields{Opcode: op, PKey: 0xFFFF, AckReq: true, PSN: packet.PSN(psn)}
	}
	seed(0, &packet.Headers{BTH: bth(packet.RCSendOnly, 0)}, []byte("hello"))
	seed(0, &packet.Headers{BTH: bth(packet.RCRDMAWriteOnly, 0), RETH: packet.RETHFields{VirtualAddress: 0x1000, RKey: 0x100, DMALength: 4}}, []byte("abcd"))
	seed(0, &packet.Headers{BTH: bth(packet.RCRDMAReadRequest, 0), RETH: packet.RETHFields{VirtualAddress: 0x1000, RKey: 0x100, DMALength: 600}}, nil)
	seed(0, &packet.Headers{BTH: bth(packet.RCFetchAdd, 0), AtomicETH: packet.AtomicETHFields{VirtualAddress: 0x1000, RKey: 0x100, SwapAddData: 1}}, nil)
	seed(0, &packet.Headers{BTH: bth(packet.RCSendFirst, 0)}, make([]byte, rspMTUB))
	seed(1, &packet.Headers{BTH: bth(packet.UCSendOnlyWithImmediate, 0)}, []byte("uc"))
	seed(2, &packet.Headers{BTH: bth(packet.UDSendOnly, 0), DETH: packet.DETHFields{QKey: udQKey, SrcQP: 5}}, []byte("ud"))

	f.Fuzz(func(t *testing.T, typ uint8, data []byte) {
		var p packet.Parsed
		if packet.Parse(data, &p) != nil {
			return
		}
		types := [...]qp.Type{qp.TypeRC, qp.TypeUC, qp.TypeUD}
		env := newRspEnv(t, rspOptions{typ: types[int(typ)%len(types)], access: rcAccess, maxDestRd: 2})
		// One region whose IOVA the seeds name, with guard bytes on both sides.
		const guard = 64
		buf := make([]byte, 2*guard+4096)
		_, err := env.mem.RegMRIOVA(env.pd, buf[guard:guard+4096], 0x1000, remoteAccess)
		rspMust(t, err)
		recv := make([]byte, 2*guard+1024)
		rm, err := env.mem.RegMR(env.pd, recv[guard:guard+1024], mr.AccessLocalWrite)
		rspMust(t, err)
		rspMust(t, env.q.PostRecv([]qp.RecvWR{{ID: 1, SGList: []mr.SGE{{Addr: rm.IOVA(), Length: 1024, LKey: rm.LKey()}}}}))
		env.deliver(&p)
		env.deliver(&p) // and once more, as a duplicate
		env.run()
		for _, b := range [][]byte{buf[:guard], buf[len(buf)-guard:], recv[:guard], recv[len(recv)-guard:]} {
			for _, c := range b {
				if c != 0 {
					t.Fatal("responder wrote outside registered memory")
				}
			}
		}
	})
}
