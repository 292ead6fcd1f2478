package transport

import (
	"bytes"
	"testing"
	"time"

	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/qp"
)

func TestHarnessRCSend(t *testing.T) {
	h := newHarness(t)
	a, b := h.pair(hQPOptions{})
	src := a.d.region(5000, 0)
	copy(src.buf, hPattern(5000, 1))
	dst := b.d.region(5000, 0)
	b.postRecv(7, dst.sge(0, 5000))
	a.post(qp.SendWR{ID: 1, Opcode: qp.WRSend, Flags: qp.SendSignaled, SGList: []mr.SGE{src.sge(0, 5000)}})
	h.settle(time.Second)
	wcs := a.pollSend()
	if len(wcs) != 1 {
		t.Fatalf("send WCs %v", wcs)
	}
	wantWC(t, wcs[0], 1, cq.WCSuccess, cq.OpcodeSend)
	rw := b.pollRecv()
	if len(rw) != 1 || rw[0].ByteLen != 5000 {
		t.Fatalf("recv WCs %+v", rw)
	}
	if !bytes.Equal(dst.buf, src.buf) {
		t.Fatal("data differs")
	}
}
