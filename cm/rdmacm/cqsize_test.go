package rdmacm

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
)

// TestDefaultCQsFitTheQueues: with Options.CQE zero, each CQ is as deep as the queue completing
// into it, and a client that posts until ErrQueueFull and then polls never overruns its send CQ.
func TestDefaultCQsFitTheQueues(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const total = 1600
		ctx := testCtx(t)
		as := twoAgents(t)
		client, server := pair(t, ctx, as, &Options{}, &Options{})
		_, init, err := client.QP().Query()
		require.NoError(t, err)
		assert.Equal(t, init.Cap.MaxSendWR, client.SendCQ().CQE(), "send CQ entries")
		assert.Equal(t, init.Cap.MaxRecvWR, client.RecvCQ().CQE(), "receive CQ entries")

		src := make([]byte, 64)
		smr, err := client.PD().RegMR(src, gorxe.AccessLocalWrite)
		require.NoError(t, err)
		dst := make([]byte, 64)
		dmr, err := server.PD().RegMR(dst, gorxe.AccessLocalWrite|gorxe.AccessRemoteWrite)
		require.NoError(t, err)

		scq := client.SendCQ()
		wcs := make([]gorxe.WC, 8)
		posted, polled := 0, 0
		for polled < total {
			for ; posted < total; posted++ {
				err := client.QP().PostSend([]gorxe.SendWR{{ID: uint64(posted), Opcode: gorxe.WRRDMAWrite, Flags: gorxe.SendSignaled,
					SGList: []gorxe.SGE{{Addr: smr.Addr(), Length: 64, LKey: smr.LKey()}},
					RDMA:   gorxe.RDMAInfo{RemoteAddr: dmr.Addr(), RKey: dmr.RKey()}}})
				if err != nil {
					require.ErrorIs(t, err, gorxe.ErrQueueFull, "post %d", posted)
					break
				}
			}
			n := scq.Poll(wcs)
			for _, wc := range wcs[:n] {
				require.Equal(t, gorxe.WCSuccess, wc.Status, "%+v", wc)
				require.Equal(t, uint64(polled), wc.WRID, "completions in order")
				polled++
			}
			require.NoError(t, scq.Err(), "posted %d, polled %d", posted, polled)
			if n == 0 {
				require.NoError(t, scq.Wait(ctx))
			}
		}
		assert.Equal(t, gorxe.QPStateRTS, client.QP().State())
		require.NoError(t, smr.Dereg())
		require.NoError(t, dmr.Dereg())
		require.NoError(t, client.Disconnect(ctx))
		require.NoError(t, client.Close())
		drain(t, ctx, client)
		require.NoError(t, server.Close())
		drain(t, ctx, server)
	})
}
