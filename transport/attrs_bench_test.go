package transport

import (
	"testing"

	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

// BenchmarkEngineAfterModify measures an RC QP's first two engine calls after Modify changed an
// attribute (RTS to RTS with another min_rnr_timer): a Run, where the requester meets the change,
// and the receipt of a request, where the responder does (a SEND far ahead of the expected PSN,
// dropped after the checks). Each re-reads the attributes the change affects.
func BenchmarkEngineAfterModify(b *testing.B) {
	r := newAllocRig(&testing.T{})
	timer := uint8(1)
	req := packet.Headers{BTH: packet.BTHFields{Opcode: packet.RCSendOnly, PSN: 0x400000}}
	b.ReportAllocs()
	for b.Loop() {
		timer ^= 3
		if err := r.a.q.Modify(&qp.Attr{State: qp.StateRTS, MinRNRTimer: timer}, qp.AttrState|qp.AttrMinRNRTimer); err != nil {
			b.Fatal(err)
		}
		r.out.Reset()
		r.a.e.Run(hStart, &r.out)
		r.respond(&req, nil)
	}
}
