package gorxe

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCQWait checks that Wait returns once a completion is queued, that it reports an expired
// context, and that a CQ without a channel is refused.
func TestCQWait(t *testing.T) {
	a, b := fabricPair(t)
	qa, qb := rcPair(t, a, b, MTU1024)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.cq.Wait(ctx); !errors.Is(err, context.Canceled) {
		require.Fail(t, fmt.Sprintf("Wait on an empty CQ with a cancelled context: %v", err))
	}
	require.NoError(t, qb.PostRecv([]RecvWR{{ID: 1, SGList: b.sge(0, 64)}}))
	require.NoError(t, qa.PostSend([]SendWR{{ID: 2, Opcode: WRSend, Flags: SendSignaled, SGList: a.sge(0, 64)}}))
	require.NoError(t, b.cq.Wait(context.Background()), "Wait")
	wcs := make([]WC, 1)
	if n := b.cq.Poll(wcs); n != 1 || wcs[0].WRID != 1 {
		require.Fail(t, fmt.Sprintf("after Wait, Poll gave %d %+v", n, wcs[0]))
	}
	bare, err := b.d.CreateCQ(1, nil)
	require.NoError(t, err)
	defer bare.Destroy()
	if err := bare.Wait(context.Background()); !errors.Is(err, ErrNoChannel) {
		require.Fail(t, fmt.Sprintf("Wait without a channel: %v", err))
	}
}
