package transport

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/qp"
)

// viewsTrace runs a WRITE of 64 KiB, a SEND of 5000 bytes over two SGEs, a 64-byte SEND and a
// READ of 64 KiB between two engines, with both devices' Output.Views as given, and returns every
// packet emitted, in order, and how many left with their payload in registered memory.
func viewsTrace(t *testing.T, views bool) ([][]byte, int) {
	h := newHarness(t)
	h.keep = true
	a, b := h.pair(hQPOptions{mtu: qp.MTU4096})
	a.d.out.Views, b.d.out.Views = views, views
	src := a.d.region(1<<16, 0)
	copy(src.buf, hPattern(1<<16, 3))
	dst := b.d.region(1<<16, 0)
	rsrc := b.d.region(1<<16, 0)
	copy(rsrc.buf, hPattern(1<<16, 5))
	rdone := a.d.region(1<<16, 0)
	rdst := b.d.region(5000, 0)
	rsmall := b.d.region(64, 0)
	b.postRecv(7, rdst.sge(0, 5000))
	b.postRecv(8, rsmall.sge(0, 64))
	a.post(
		qp.SendWR{ID: 1, Opcode: qp.WRRDMAWrite, SGList: []mr.SGE{src.sge(0, 1<<16)},
			RDMA: qp.RDMAInfo{RemoteAddr: dst.mr.IOVA(), RKey: dst.mr.RKey()}},
		qp.SendWR{ID: 2, Opcode: qp.WRSend, SGList: []mr.SGE{src.sge(100, 3000), src.sge(9000, 2000)}},
		qp.SendWR{ID: 3, Opcode: qp.WRSend, Flags: qp.SendSignaled, SGList: []mr.SGE{src.sge(0, 64)}},
		qp.SendWR{ID: 4, Opcode: qp.WRRDMARead, Flags: qp.SendSignaled, SGList: []mr.SGE{rdone.sge(0, 1<<16)},
			RDMA: qp.RDMAInfo{RemoteAddr: rsrc.mr.IOVA(), RKey: rsrc.mr.RKey()}})
	h.settle(time.Second)
	require.Len(t, a.pollSend(), 2)
	require.Equal(t, rsrc.buf, rdone.buf, "READ data")
	require.Len(t, b.pollRecv(), 2)
	require.Equal(t, src.buf, dst.buf, "WRITE data")
	require.Equal(t, append(append([]byte(nil), src.buf[100:3100]...), src.buf[9000:11000]...), rdst.buf,
		"SEND data over two SGEs")
	require.Equal(t, src.buf[:64], rsmall.buf, "64-byte SEND data")
	var pkts [][]byte
	for _, p := range h.trace {
		pkts = append(pkts, p.buf)
	}
	return pkts, h.stats.Views
}

// TestViewsCarryTheData: with Output.Views, the WRITE's 16 packets and the READ's 16 responses
// leave with their payload in registered memory, the harness finds each one whole, parsable and
// with a good ICRC, and the data arrives; the SENDs' payloads, which cross SGEs or are short, are
// copied; and the packets are as many and as long as the copy's (not the same bytes: each run
// registers its regions afresh, with other keys in the RETHs and so other ICRCs).
func TestViewsCarryTheData(t *testing.T) {
	copied, none := viewsTrace(t, false)
	viewed, n := viewsTrace(t, true)
	assert.Zero(t, none)
	assert.Equal(t, 32, n, "packets sent from registered memory")
	require.Len(t, viewed, len(copied))
	for i := range copied {
		assert.Len(t, viewed[i], len(copied[i]), "packet %d", i)
	}
}
