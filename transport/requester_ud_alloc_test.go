package transport

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/qp"
)

// udSendRig is a UD QP that sends 64-byte datagrams through an address handle, its engine run by
// hand with pooled output buffers.
type udSendRig struct {
	a   *hEndpoint
	wrs []qp.SendWR
	out Output
	buf []byte
}

func newUDSendRig(t *testing.T) *udSendRig {
	a, b, ah := udPair(t, newHarness(t), udQKey)
	src := a.d.region(64, 0)
	r := &udSendRig{a: a, buf: make([]byte, 0, MaxPacketSize), wrs: []qp.SendWR{{Opcode: qp.WRSend, Flags: qp.SendSignaled,
		SGList: []mr.SGE{src.sge(0, 64)}, UD: qp.UDInfo{AH: ah, RemoteQPN: b.q.QPN(), RemoteQKey: udQKey}}}}
	r.out.Alloc = func() []byte { return r.buf[:0] }
	r.out.Packets = make([]Packet, 0, 1)
	return r
}

// send posts one datagram, runs the engine and polls its completion. It runs inside AllocsPerRun
// closures and benchmark loops, so it reports failures as text rather than through testify.
func (r *udSendRig) send() string {
	if err := postSend(r.a.q, r.wrs); err != nil {
		return err.Error()
	}
	r.out.Reset()
	r.a.e.Run(hStart, &r.out)
	var wcs [1]cq.WC
	switch {
	case len(r.out.Packets) != 1:
		return "no datagram"
	case r.a.scq.Poll(wcs[:]) != 1 || wcs[0].Status != cq.WCSuccess:
		return "no successful completion"
	}
	return ""
}

func TestAllocsSendUD(t *testing.T) {
	r := newUDSendRig(t)
	var failed string
	allocs := testing.AllocsPerRun(200, func() {
		if s := r.send(); s != "" {
			failed = s
		}
	})
	require.Empty(t, failed)
	require.Zero(t, allocs, "allocations per UD datagram")
}

// BenchmarkRequesterSendUD measures a 64-byte UD SEND through an address handle: post, build and
// complete.
func BenchmarkRequesterSendUD(b *testing.B) {
	r := newUDSendRig(&testing.T{})
	b.ReportAllocs()
	for b.Loop() {
		if s := r.send(); s != "" {
			b.Fatal(s)
		}
	}
}
