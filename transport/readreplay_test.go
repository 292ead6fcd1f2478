package transport

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

// Kernel rxe answers a READ asked again from the middle of its message the way it answered the
// original: a replay that starts with a MIDDLE packet. Between the request and that replay, the
// rest of the old answer is still arriving. Both READs complete with their data.
func TestCompleterReadReplayAfterStaleStream(t *testing.T) {
	pr := newProbe(t, hQPOptions{mtu: qp.MTU256})
	dst := pr.a.d.region(4096, 0)
	data := hPattern(4096, 5)
	pr.a.post(
		qp.SendWR{ID: 1, Opcode: qp.WRRDMARead, Flags: qp.SendSignaled, SGList: []mr.SGE{dst.sge(0, 2048)},
			RDMA: qp.RDMAInfo{RemoteAddr: 0x10000, RKey: 0x55}},
		qp.SendWR{ID: 2, Opcode: qp.WRRDMARead, Flags: qp.SendSignaled, SGList: []mr.SGE{dst.sge(2048, 2048)},
			RDMA: qp.RDMAInfo{RemoteAddr: 0x20000, RKey: 0x55}},
	)
	pr.idle()
	base := pr.sent[0].h.BTH.PSN
	op := func(k int) packet.Opcode {
		switch k % 8 {
		case 0:
			return packet.RCRDMAReadResponseFirst
		case 7:
			return packet.RCRDMAReadResponseLast
		}
		return packet.RCRDMAReadResponseMiddle
	}
	resp := func(k int, o packet.Opcode) {
		pr.readResp(o, base.Add(uint32(k)), data[k*256:(k+1)*256])
	}
	resp(0, op(0))
	resp(1, op(1))
	// 2 is lost: 3 reveals the gap and the rest of the old answer follows.
	for k := 3; k < 16; k++ {
		resp(k, op(k))
	}
	// The replay from 2, as rxe sends it: MIDDLE first.
	for k := 2; k < 16; k++ {
		resp(k, op(k))
	}
	wcs := pr.a.pollSend()
	require.Len(t, wcs, 2)
	wantWC(t, wcs[0], 1, cq.WCSuccess, cq.OpcodeRDMARead)
	wantWC(t, wcs[1], 2, cq.WCSuccess, cq.OpcodeRDMARead)
	require.Equal(t, data, dst.buf[:4096])
}
