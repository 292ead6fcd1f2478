package rdmacm

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
)

// The QP of each side uses the caller's CQs, which Close leaves to the caller; the TOS travels in
// the REQ's path to both QPs; the ACK timeout and the RNR NAK timer replace the negotiated ones
// on the side that set them only; the listener holds the requests its backlog allows.
func TestOptionsOfAPerftestConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		devs := fabricDevices(t, nil, clientAddr, serverAddr.Addr().String())
		as := agents(t, devs...)
		var cqs [2][2]*gorxe.CQ
		for i, d := range devs {
			for j := range cqs[i] {
				ch, err := d.CreateCompChannel()
				require.NoError(t, err)
				cq, err := d.CreateCQ(16, ch)
				require.NoError(t, err)
				t.Cleanup(func() { cq.Destroy(); ch.Destroy() })
				cqs[i][j] = cq
			}
		}
		copts := &Options{SendCQ: cqs[0][0], RecvCQ: cqs[0][1], TrafficClass: 96, AckTimeout: 18}
		sopts := &Options{SendCQ: cqs[1][0], RecvCQ: cqs[1][1], MinRNRTimer: 12, Backlog: 32}
		client, server := pair(t, ctx, as, copts, sopts)
		assert.Same(t, cqs[0][0], client.SendCQ())
		assert.Same(t, cqs[1][1], server.RecvCQ())
		exchange(t, ctx, client, server, "hello")

		cattr, _, err := client.QP().Query()
		require.NoError(t, err)
		sattr, _, err := server.QP().Query()
		require.NoError(t, err)
		assert.Equal(t, uint8(96), cattr.AHAttr.GRH.TrafficClass, "client's traffic class")
		assert.Equal(t, uint8(96), sattr.AHAttr.GRH.TrafficClass, "server's traffic class, from the REQ")
		assert.Equal(t, uint8(18), cattr.Timeout, "client's ACK timeout")
		assert.Equal(t, server.Attrs().Timeout, sattr.Timeout, "server's negotiated ACK timeout")
		assert.Equal(t, uint8(12), sattr.MinRNRTimer, "server's RNR NAK timer")
		assert.Equal(t, client.Attrs().MinRNRTimer, cattr.MinRNRTimer, "client's RNR NAK timer from the CM")

		require.NoError(t, client.Close())
		require.NoError(t, server.Close())
		<-client.Done()
		<-server.Done()
		for i := range cqs {
			for _, cq := range cqs[i] {
				assert.Equal(t, 16, cq.CQE(), "a caller's CQ outlives the connection")
			}
		}
	})
}

func TestOptionsOneCQIsAMistake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		devs := fabricDevices(t, nil, clientAddr, serverAddr.Addr().String())
		as := agents(t, devs...)
		ch, err := devs[0].CreateCompChannel()
		require.NoError(t, err)
		cq, err := devs[0].CreateCQ(4, ch)
		require.NoError(t, err)
		t.Cleanup(func() { cq.Destroy(); ch.Destroy() })
		_, err = as[0].Dial(ctx, serverAddr, &Options{SendCQ: cq})
		assert.ErrorIs(t, err, ErrOptions)
	})
}

// A listener whose backlog is longer than the default holds every request of a client that
// connects many QPs at once, as perftest -q does.
func TestListenBacklog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		devs := fabricDevices(t, nil, clientAddr, serverAddr.Addr().String())
		as := agents(t, devs...)
		const n = backlogLen + 4
		l, err := as[1].Listen(ctx, serverAddr, &Options{Backlog: n})
		require.NoError(t, err)
		defer l.Close()
		dialed := make(chan error, n)
		conns := make(chan *Conn, n)
		for range n {
			go func() {
				c, err := as[0].Dial(ctx, serverAddr, nil)
				if err == nil {
					conns <- c
				}
				dialed <- err
			}()
		}
		// Nobody accepts until every request is in.
		synctest.Wait()
		require.Len(t, l.core.backlog, n, "the backlog never filled")
		select {
		case err := <-dialed:
			require.NoError(t, err, "a request was refused")
		default:
		}
		var accepted []*Conn
		for range n {
			c, err := l.Accept(ctx)
			require.NoError(t, err)
			accepted = append(accepted, c)
		}
		for range n {
			assert.NoError(t, <-dialed)
		}
		close(conns)
		for c := range conns {
			c.Close()
			<-c.Done()
		}
		for _, c := range accepted {
			c.Close()
			<-c.Done()
		}
	})
}
