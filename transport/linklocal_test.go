package transport

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/qp"
)

// TestE2ELinkLocalZones connects two QPs by IPv6 link-local GIDs (GID index 0 on rxe) on devices
// whose sockets report both ends of every received packet with the interface's zone, while the
// address vectors hold the zone-less GIDs. Requests, acknowledgements and READ responses must
// still be recognised as coming from the peer.
func TestE2ELinkLocalZones(t *testing.T) {
	h := newHarness(t)
	for _, a := range []string{"fe80::5054:ff:fe67:7801", "fe80::5054:ff:fe67:7802"} {
		h.device(a).zone = "br0"
	}
	a, b := h.pair(hQPOptions{})
	x := &e2e{h: h, a: a, b: b, aBuf: a.d.region(e2eSize, 0), bBuf: b.d.region(e2eSize, 0)}
	copy(x.aBuf.buf, hPattern(e2eSize, 11))
	copy(x.bBuf.buf, hPattern(e2eSize, 22))

	recv := b.d.region(5000, 0)
	b.postRecv(9, recv.sge(0, len(recv.buf)))
	wantWC(t, x.one(qp.SendWR{ID: 1, Opcode: qp.WRSend, SGList: []mr.SGE{x.aBuf.sge(0, 3000)}}), 1, cq.WCSuccess, cq.OpcodeSend)
	rw := b.pollRecv()
	require.Len(t, rw, 1, "receive completions (path drops %d, %d)", a.d.count(counter.RcvdWrongPath), b.d.count(counter.RcvdWrongPath))
	wantWC(t, rw[0], 9, cq.WCSuccess, cq.OpcodeRecv)
	require.True(t, bytes.Equal(recv.buf[:3000], x.aBuf.buf[:3000]), "sent data differs")

	wc := x.one(qp.SendWR{ID: 2, Opcode: qp.WRRDMARead, SGList: []mr.SGE{x.aBuf.sge(100, 2500)},
		RDMA: qp.RDMAInfo{RemoteAddr: x.bBuf.mr.IOVA(), RKey: x.bBuf.mr.RKey()}})
	wantWC(t, wc, 2, cq.WCSuccess, cq.OpcodeRDMARead)
	require.True(t, bytes.Equal(x.aBuf.buf[100:2600], x.bBuf.buf[:2500]), "read data differs")
	for _, d := range h.devs {
		assert.Zero(t, d.count(counter.RcvdWrongPath), "packets device %v dropped as not from its peer", d.addr)
	}
	h.settle(time.Second)
}
