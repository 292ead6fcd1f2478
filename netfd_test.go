package gorxe

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestNetworkFDs: a device on UDP sockets gives the descriptors of its listening sockets, bound
// to its address and RoCE port; one on a supplied network and a closed one give none.
func TestNetworkFDs(t *testing.T) {
	port := loopbackPort(t)
	d := openUDP(t, "127.0.0.1", port)
	fds := d.NetworkFDs(nil)
	require.NotEmpty(t, fds)
	for _, fd := range fds {
		sa, err := unix.Getsockname(fd)
		require.NoError(t, err)
		in, ok := sa.(*unix.SockaddrInet4)
		require.True(t, ok)
		assert.Equal(t, [4]byte{127, 0, 0, 1}, in.Addr)
		assert.Equal(t, int(port), in.Port)
	}
	assert.Empty(t, newTestFabric(t).open(t, "10.0.0.1").NetworkFDs(nil), "a supplied network")
	require.NoError(t, d.Close())
	assert.Empty(t, d.NetworkFDs(nil), "closed")
}

// TestCompChannelFunc: a completion event goes to the channel's take on the goroutine that
// delivered the completion, and counts as received for AckEvents.
func TestCompChannelFunc(t *testing.T) {
	a, b := fabricPair(t)
	_, err := a.d.CreateCompChannelFunc(nil)
	require.ErrorIs(t, err, ErrInvalidArgument)

	events := make(chan *CQ, 4)
	ch, err := a.d.CreateCompChannelFunc(func(c *CQ) bool { events <- c; return true })
	require.NoError(t, err)
	sendCQ, err := a.d.CreateCQ(16, ch)
	require.NoError(t, err)
	qa, err := a.d.CreateQP(a.pd, &QPInitAttr{SendCQ: sendCQ, RecvCQ: a.cq, QPType: QPTypeRC,
		Cap: QPCap{MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}})
	require.NoError(t, err)
	qb := b.qp(t, QPTypeRC)
	connectRC(t, qa, b.gid, qb.QPN(), 0x100, 0x200, MTU1024)
	connectRC(t, qb, a.gid, qa.QPN(), 0x200, 0x100, MTU1024)

	require.NoError(t, sendCQ.ReqNotify(false))
	require.NoError(t, qa.PostSend([]SendWR{{ID: 7, Opcode: WRRDMAWrite, Flags: SendSignaled, SGList: a.sge(0, 64),
		RDMA: RDMAInfo{RemoteAddr: b.mr.Addr(), RKey: b.mr.RKey()}}}))
	require.Same(t, sendCQ, <-events)
	wcs := make([]WC, 1)
	require.Equal(t, 1, sendCQ.Poll(wcs))
	assert.Equal(t, WCSuccess, wcs[0].Status)
	assert.Equal(t, uint64(7), wcs[0].WRID)
	require.NoError(t, sendCQ.AckEvents(1))
	require.Error(t, sendCQ.AckEvents(1), "one event was taken")

	require.NoError(t, qa.Destroy())
	require.NoError(t, sendCQ.Destroy())
	require.NoError(t, ch.Destroy())
}
