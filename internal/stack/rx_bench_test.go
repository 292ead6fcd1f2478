package stack

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/netio"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

// BenchmarkClassify measures the receive path's checks and routing of one 1 KiB SEND: for a
// live QP (parse, QPN index, ICRC, batching) and for a QPN the device does not have (dropped).
func BenchmarkClassify(b *testing.B) {
	x := newRig(b, "10.0.0.1")
	q, _ := x.create(b, qp.TypeRC)
	src := netip.AddrPortFrom(mustAddr("10.0.0.2"), 0xC000)
	dst := netip.AddrPortFrom(mustAddr("10.0.0.1"), packet.UDPPort)
	for _, tc := range []struct {
		name string
		qpn  uint32
	}{{"known", q.qpn}, {"unknownQPN", q.qpn + 1000}} {
		b.Run(tc.name, func(b *testing.B) {
			pkt, err := packet.AppendPacket(nil, sendOnly(tc.qpn, 0xFFFF), make([]byte, 1024))
			require.NoError(b, err)
			env := packet.Envelope{Src: src, Dst: dst, IPFlags: packet.IPv4DontFragment}
			require.NoError(b, env.PutICRC(pkt))
			batches := make([]*rxBatch, len(x.rt.workers))
			m := netio.Message{Src: src, Dst: dst}
			buf := getBuf()
			b.ReportAllocs()
			for b.Loop() {
				m.Buf = buf[:copy(buf, pkt)]
				if _, taken := x.rt.classify(m.Buf, &m, nil, batches, nil); taken {
					buf = getBuf()
				}
				for i, bt := range batches {
					if bt != nil {
						dropBatch(bt)
						batches[i] = nil
					}
				}
			}
		})
	}
}
