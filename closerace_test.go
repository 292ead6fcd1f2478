package gorxe

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPostsRacingClose: receives and sends posted while Close runs either fail with
// ErrDeviceClosed or complete, flushed, by the time Close returns or at once: none is left
// without a completion, and every post that starts after Close returned fails.
func TestPostsRacingClose(t *testing.T) {
	const depth = 512
	for round := range 20 {
		f := newTestFabric(t)
		d, err := Open(Config{Addr: mustAddr("10.0.0.1"), Network: f.fab.Network(), Clock: f.clk, Workers: 2})
		require.NoError(t, err)
		pd, err := d.AllocPD()
		require.NoError(t, err)
		buf := make([]byte, 64)
		m, err := pd.RegMR(buf, AccessLocalWrite)
		require.NoError(t, err)
		c, err := d.CreateCQ(4*depth, nil)
		require.NoError(t, err)
		q, err := d.CreateQP(pd, &QPInitAttr{SendCQ: c, RecvCQ: c, QPType: QPTypeUD,
			Cap: QPCap{MaxSendWR: depth, MaxRecvWR: depth, MaxSendSGE: 1, MaxRecvSGE: 1}})
		require.NoError(t, err)
		require.NoError(t, q.Modify(&QPAttr{State: QPStateInit, PortNum: 1, QKey: 1}, QPAttrState|QPAttrPKeyIndex|QPAttrPort|QPAttrQKey))
		require.NoError(t, q.Modify(&QPAttr{State: QPStateRTR}, QPAttrState))
		require.NoError(t, q.Modify(&QPAttr{State: QPStateRTS}, QPAttrState|QPAttrSQPSN))
		ah, err := pd.CreateAH(&AHAttr{IsGlobal: true, PortNum: 1, GRH: GlobalRoute{DGID: d.gids[1].GID, SGIDIndex: 1}})
		require.NoError(t, err)
		sge := []SGE{{Addr: m.Addr(), Length: 64, LKey: m.LKey()}}

		type result struct{ posted int }
		started := make(chan struct{}, 2)
		results := make(chan result, 2)
		post := func(f func() error) {
			n := 0
			for n < depth {
				if err := f(); err != nil {
					assert.ErrorIs(t, err, ErrDeviceClosed, "round %d", round)
					break
				}
				if n++; n == 1 {
					started <- struct{}{}
				}
			}
			if n == 0 {
				started <- struct{}{}
			}
			results <- result{n}
		}
		go post(func() error { return q.PostRecv([]RecvWR{{SGList: sge}}) })
		// Sent to a QPN nobody has: only the local completion comes back.
		go post(func() error {
			return q.PostSend([]SendWR{{Opcode: WRSend, Flags: SendSignaled, SGList: sge,
				UD: UDInfo{AH: ah, RemoteQPN: 0x999, RemoteQKey: 1}}})
		})
		<-started
		<-started
		require.NoError(t, d.Close())
		posted := (<-results).posted + (<-results).posted
		completed := 0
		var wcs [64]WC
		for n := c.Poll(wcs[:]); n > 0; n = c.Poll(wcs[:]) {
			completed += n
		}
		require.Equal(t, posted, completed, "round %d: completions for the posted work requests", round)
		require.ErrorIs(t, q.PostRecv([]RecvWR{{SGList: sge}}), ErrDeviceClosed)
	}
}
