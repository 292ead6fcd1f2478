package rdmacm

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cm"
	"github.com/gorxe/gorxe/cm/mad"
)

// TestFullBacklogDropsREQ: with a backlog of one, a REQ that arrives while another waits for
// Accept is dropped unanswered, as the kernel drops it, instead of rejected. Its client keeps
// retransmitting the REQ, and once Accept has taken the first request a retransmission finds
// room and the second client connects.
func TestFullBacklogDropsREQ(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		devs := fabricDevices(t, nil, clientAddr, serverAddr.Addr().String())
		// The client has RDMA-CM's own timeouts: it retransmits its REQ every 4.3 s of the bubble's
		// time, as a kernel client would.
		client, err := Open(devs[0], Config{})
		require.NoError(t, err)
		t.Cleanup(func() { client.Close() })
		server := agents(t, devs[1])[0]
		l, err := server.Listen(ctx, serverAddr, &Options{Backlog: 1})
		require.NoError(t, err)
		defer l.Close()

		stats := func(a *Agent) cm.Counters {
			st, err := a.Stats(ctx)
			require.NoError(t, err)
			return st.CM
		}
		type dialed struct {
			c   *Conn
			err error
		}
		dial := func() chan dialed {
			ch := make(chan dialed, 1)
			go func() {
				c, err := client.Dial(ctx, serverAddr, nil)
				ch <- dialed{c, err}
			}()
			return ch
		}

		first := dial()
		synctest.Wait()
		require.Len(t, l.core.backlog, 1, "the first REQ never queued")
		second := dial()
		synctest.Wait()
		require.Equal(t, uint64(1), stats(server).BacklogFull, "the second REQ never arrived")
		st := stats(server)
		assert.Zero(t, st.Message(mad.AttrREJ).Sent, "a REQ beyond the backlog is not rejected")
		assert.Zero(t, st.Rejected)
		assert.Len(t, l.core.backlog, 1, "the dropped REQ is not queued")
		select {
		case d := <-second:
			require.Failf(t, "the second Dial ended while the backlog was full", "err %v", d.err)
		default:
		}

		s1, err := l.Accept(ctx)
		require.NoError(t, err)
		d1 := <-first
		require.NoError(t, d1.err)
		s2, err := l.Accept(ctx)
		require.NoError(t, err)
		d2 := <-second
		require.NoError(t, d2.err)
		assert.Equal(t, d1.c.LocalAddr(), s1.RemoteAddr())
		assert.Equal(t, d2.c.LocalAddr(), s2.RemoteAddr())
		exchange(t, ctx, d2.c, s2, "after a retransmitted REQ")

		cs := stats(client)
		assert.Positive(t, cs.Message(mad.AttrREQ).Retransmits, "the second client got through by retransmitting")
		assert.Zero(t, cs.Message(mad.AttrREJ).Received)
		st = stats(server)
		assert.Zero(t, st.Message(mad.AttrREJ).Sent)
		assert.GreaterOrEqual(t, st.Message(mad.AttrREQ).Received, uint64(3), "two REQs and a retransmission")

		for _, c := range []*Conn{d1.c, s1, d2.c, s2} {
			require.NoError(t, c.Close())
		}
		for _, c := range []*Conn{d1.c, s1, d2.c, s2} {
			drain(t, ctx, c)
		}
	})
}
