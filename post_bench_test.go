package gorxe

import (
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkPostRecvFlush posts receives from every P at once, each goroutine to a QP and CQ of
// its own on one device: the QPs are in the error state, so each receive completes at once as
// flushed and is polled back. Nothing is shared between the goroutines but the device.
func BenchmarkPostRecvFlush(b *testing.B) {
	d := newTestFabric(b).open(b, "10.0.0.1")
	pd, err := d.AllocPD()
	require.NoError(b, err)
	buf := make([]byte, 64)
	m, err := pd.RegMR(buf, AccessLocalWrite)
	require.NoError(b, err)
	type pair struct {
		q *QP
		c *CQ
	}
	pairs := make([]pair, runtime.GOMAXPROCS(0))
	for i := range pairs {
		c, err := d.CreateCQ(16, nil)
		require.NoError(b, err)
		q, err := d.CreateQP(pd, &QPInitAttr{SendCQ: c, RecvCQ: c, QPType: QPTypeRC,
			Cap: QPCap{MaxSendWR: 1, MaxRecvWR: 16, MaxSendSGE: 1, MaxRecvSGE: 1}})
		require.NoError(b, err)
		require.NoError(b, q.Modify(&QPAttr{State: QPStateInit, PortNum: 1, AccessFlags: AccessLocalWrite},
			QPAttrState|QPAttrPKeyIndex|QPAttrPort|QPAttrAccessFlags))
		require.NoError(b, q.Modify(&QPAttr{State: QPStateErr}, QPAttrState))
		pairs[i] = pair{q, c}
	}
	var next atomic.Int32
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		p := pairs[int(next.Add(1)-1)%len(pairs)]
		wr := []RecvWR{{SGList: []SGE{{Addr: m.Addr(), Length: 64, LKey: m.LKey()}}}}
		var wcs [1]WC
		for pb.Next() {
			if err := p.q.PostRecv(wr); err != nil {
				b.Fatal(err)
			}
			if p.c.Poll(wcs[:]) != 1 {
				b.Fatal("no flush completion")
			}
		}
	})
}
