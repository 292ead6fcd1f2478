package rdmacm

import (
	"errors"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm"
	"github.com/gorxe/gorxe/cm/mad"
	"github.com/gorxe/gorxe/netio"
)

// callerQP creates an RC QP with its own CQs on dev, as a librdmacm program creates the QP of an
// id (rdma_create_qp), and returns it with its PD.
func callerQP(t *testing.T, dev *gorxe.Device) (*gorxe.QP, *gorxe.PD) {
	t.Helper()
	pd, err := dev.AllocPD()
	require.NoError(t, err)
	ch, err := dev.CreateCompChannel()
	require.NoError(t, err)
	cq, err := dev.CreateCQ(16, ch)
	require.NoError(t, err)
	qp, err := dev.CreateQP(pd, &gorxe.QPInitAttr{SendCQ: cq, RecvCQ: cq, QPType: gorxe.QPTypeRC,
		Cap: gorxe.QPCap{MaxSendWR: 8, MaxRecvWR: 8, MaxSendSGE: 1, MaxRecvSGE: 1}})
	require.NoError(t, err)
	t.Cleanup(func() {
		assert.NoError(t, qp.Destroy())
		assert.NoError(t, cq.Destroy())
		assert.NoError(t, ch.Destroy())
		assert.NoError(t, pd.Dealloc())
	})
	return qp, pd
}

// TestRequestAcceptWithCallerQPs answers a request seen with Listener.Next, both sides on QPs
// their callers created (Options.QP): the connection uses them, moves them to RTS, carries a
// message, and Close leaves them to the callers.
func TestRequestAcceptWithCallerQPs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		devs := fabricDevices(t, nil, clientAddr, "10.0.0.2")
		as := agents(t, devs...)
		cqp, _ := callerQP(t, devs[0])
		sqp, _ := callerQP(t, devs[1])
		l := serverListener(t, ctx, as[1], nil)

		accepted := make(chan *Conn, 1)
		go func() {
			req, err := l.Next(ctx)
			if !assert.NoError(t, err) {
				accepted <- nil
				return
			}
			assert.Equal(t, "hello", string(req.PrivateData()[:5]))
			assert.Equal(t, serverAddr, req.LocalAddr())
			assert.Equal(t, clientAddr, req.RemoteAddr().Addr().String())
			assert.Equal(t, uint8(1), req.InitiatorDepth())
			c, err := req.Accept(ctx, &Options{QP: sqp, PrivateData: []byte("welcome")})
			assert.NoError(t, err)
			accepted <- c
		}()
		client, err := as[0].Dial(ctx, serverAddr, &Options{QP: cqp, PrivateData: []byte("hello")})
		require.NoError(t, err)
		server := <-accepted
		require.NotNil(t, server)
		assert.Same(t, cqp, client.QP())
		assert.Same(t, sqp, server.QP())
		assert.Equal(t, gorxe.QPStateRTS, cqp.State())
		assert.Equal(t, "welcome", string(client.PrivateData()[:7]))
		closeBoth(t, ctx, client, server)
		// The QPs are still the callers' (the cleanup destroys them); Close moved them to the error
		// state.
		assert.Equal(t, gorxe.QPStateErr, cqp.State())
	})
}

// TestRequestReject refuses a request with private data: Dial fails with a *RejectedError
// carrying the data and the REJ's reason, 28 (consumer defined) for Reject and 35 (vendor option
// not supported) for RejectECE, as librdmacm's peer sees RDMA_CM_EVENT_REJECTED with that status.
func TestRequestReject(t *testing.T) {
	for _, tc := range []struct {
		name   string
		reject func(*Request, []byte) error
		reason mad.RejectReason
		opts   *Options
	}{
		{"reject", (*Request).Reject, mad.RejConsumerDefined, nil},
		{"reject-ece", (*Request).RejectECE, mad.RejVendorOptionNotSupported,
			&Options{ECE: cm.ECE{VendorID: 0x02c9a1, Options: 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := testCtx(t)
				as := twoAgents(t)
				l := serverListener(t, ctx, as[1], nil)
				go func() {
					req, err := l.Next(ctx)
					if assert.NoError(t, err) {
						assert.NoError(t, tc.reject(req, []byte("no")))
					}
				}()
				_, err := as[0].Dial(ctx, serverAddr, tc.opts)
				require.ErrorIs(t, err, &cm.RejectError{Reason: tc.reason})
				var rej *RejectedError
				require.True(t, errors.As(err, &rej))
				assert.Equal(t, "no", string(rej.PrivateData[:2]))
			})
		})
	}
}

// TestCallerQPOfWrongType refuses a UD QP for a connection.
func TestCallerQPOfWrongType(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		devs := fabricDevices(t, nil, clientAddr, "10.0.0.2")
		as := agents(t, devs...)
		pd, err := devs[0].AllocPD()
		require.NoError(t, err)
		defer pd.Dealloc()
		cq, err := devs[0].CreateCQ(4, nil)
		require.NoError(t, err)
		defer cq.Destroy()
		qp, err := devs[0].CreateQP(pd, &gorxe.QPInitAttr{SendCQ: cq, RecvCQ: cq, QPType: gorxe.QPTypeUD,
			Cap: gorxe.QPCap{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}})
		require.NoError(t, err)
		defer qp.Destroy()
		_, err = as[0].Dial(ctx, serverAddr, &Options{QP: qp})
		require.ErrorIs(t, err, ErrOptions)
	})
}

// TestSendREPWithRTSAtAccept answers in two halves, as rdma_accept does: with RTSAtAccept the
// QP is in RTS as soon as the REP has left, before the connection is established, and
// WaitEstablished then returns once the RTU came.
func TestSendREPWithRTSAtAccept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		devs := fabricDevices(t, nil, clientAddr, "10.0.0.2")
		as := agents(t, devs...)
		sqp, _ := callerQP(t, devs[1])
		l := serverListener(t, ctx, as[1], nil)
		type res struct {
			c     *Conn
			state gorxe.QPState
			err   error
		}
		accepted := make(chan res, 1)
		go func() {
			req, err := l.Next(ctx)
			if err != nil {
				accepted <- res{err: err}
				return
			}
			c, err := req.SendREP(ctx, &Options{QP: sqp, RTSAtAccept: true})
			if err != nil {
				accepted <- res{err: err}
				return
			}
			st := sqp.State()
			accepted <- res{c, st, c.WaitEstablished(ctx)}
		}()
		client, err := as[0].Dial(ctx, serverAddr, nil)
		require.NoError(t, err)
		r := <-accepted
		require.NoError(t, r.err)
		assert.Equal(t, gorxe.QPStateRTS, r.state)
		exchange(t, ctx, client, r.c, "after rdma_accept")
		require.NoError(t, client.Close())
		require.NoError(t, r.c.Close())
		drain(t, ctx, client)
		drain(t, ctx, r.c)
	})
}

// TestPassiveQPInRTRUntilEstablished keeps Accept's and the package's doc true: without
// RTSAtAccept the passive side's QP is in RTR once the REP has left and goes to RTS only when the
// connection is established. The client's first RTU is lost, so the server waits in between
// until its REP's retransmission brings another.
func TestPassiveQPInRTRUntilEstablished(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		d := newDropper(map[mad.AttrID]int{mad.AttrRTU: 1})
		devs := fabricDevices(t, func(c netio.Conn) netio.Conn {
			if d.Conn == nil { // the client's
				return d.wrap(c)
			}
			return c
		}, clientAddr, serverAddr.Addr().String())
		as := agents(t, devs...)
		sqp, _ := callerQP(t, devs[1])
		l := serverListener(t, ctx, as[1], nil)
		replied := make(chan *Conn, 1)
		go func() {
			defer close(replied)
			req, err := l.Next(ctx)
			if !assert.NoError(t, err) {
				return
			}
			c, err := req.SendREP(ctx, &Options{QP: sqp})
			if assert.NoError(t, err) {
				replied <- c
			}
		}()
		client, err := as[0].Dial(ctx, serverAddr, nil)
		require.NoError(t, err)
		defer client.Close()
		server := <-replied
		require.NotNil(t, server)
		defer server.Close()
		require.NoError(t, d.waitLost(ctx, mad.AttrRTU, 1))
		synctest.Wait()
		assert.Equal(t, gorxe.QPStateRTR, sqp.State(), "REP sent, not yet established")
		require.NoError(t, server.WaitEstablished(ctx))
		assert.Equal(t, gorxe.QPStateRTS, sqp.State(), "established")
		exchange(t, ctx, client, server, "after the RTU")
	})
}

// TestSendDREQ disconnects without waiting, as rdma_disconnect does: the QP is in the error state
// when SendDREQ returns, and both sides then see the disconnection.
func TestSendDREQ(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		as := twoAgents(t)
		client, server := pair(t, ctx, as, nil, nil)
		require.NoError(t, client.SendDREQ())
		assert.Equal(t, gorxe.QPStateErr, client.QP().State())
		for _, c := range []*Conn{client, server} {
			var got []EventType
			for len(got) == 0 || got[len(got)-1] == EventEstablished {
				select {
				case e := <-c.Events():
					got = append(got, e.Type)
				case <-ctx.Done():
					require.Failf(t, "no disconnection", "events so far %v", got)
				}
			}
			assert.Equal(t, EventDisconnected, got[len(got)-1])
		}
		closeBoth(t, ctx, client, server)
	})
}

// TestCallerMovesQP connects QPs their callers move themselves (Options.QPN, as a librdmacm
// program without a QP on its id): the passive side applies Request.Attrs, Dial returns at the
// REP with the attributes for the active side, SendRTU establishes, and a message goes through.
func TestCallerMovesQP(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		devs := fabricDevices(t, nil, clientAddr, "10.0.0.2")
		as := agents(t, devs...)
		cqp, _ := callerQP(t, devs[0])
		sqp, _ := callerQP(t, devs[1])
		move := func(qp *gorxe.QP, dev *gorxe.Device, a cm.QPAttrs) error {
			r := &resources{qp: qp, responder: 1}
			if err := r.toInit(); err != nil {
				return err
			}
			if err := r.toRTR(dev, &a); err != nil {
				return err
			}
			return r.toRTS(&a)
		}
		l := serverListener(t, ctx, as[1], nil)
		accepted := make(chan *Conn, 1)
		go func() {
			defer close(accepted)
			req, err := l.Next(ctx)
			if !assert.NoError(t, err) {
				return
			}
			if !assert.NoError(t, move(sqp, devs[1], req.Attrs())) {
				return
			}
			c, err := req.Accept(ctx, &Options{QPN: sqp.QPN()})
			if assert.NoError(t, err) {
				accepted <- c
			}
		}()
		client, err := as[0].Dial(ctx, serverAddr, &Options{QPN: cqp.QPN()})
		require.NoError(t, err)
		assert.Equal(t, sqp.QPN(), client.Attrs().RemoteQPN)
		assert.Equal(t, gorxe.QPStateReset, cqp.State(), "the CM left the caller's QP alone")
		require.NoError(t, move(cqp, devs[0], client.Attrs()))
		require.NoError(t, client.SendRTU())
		server := <-accepted
		require.NotNil(t, server)

		// A message from the client's QP to the server's.
		spd, rpd := cqp.PD(), sqp.PD()
		sbuf, rbuf := []byte("own QPs"), make([]byte, 16)
		smr, err := spd.RegMR(sbuf, gorxe.AccessLocalWrite)
		require.NoError(t, err)
		defer smr.Dereg()
		rmr, err := rpd.RegMR(rbuf, gorxe.AccessLocalWrite)
		require.NoError(t, err)
		defer rmr.Dereg()
		require.NoError(t, sqp.PostRecv([]gorxe.RecvWR{{ID: 1, SGList: []gorxe.SGE{{Addr: rmr.Addr(), Length: 16, LKey: rmr.LKey()}}}}))
		require.NoError(t, cqp.PostSend([]gorxe.SendWR{{ID: 2, Opcode: gorxe.WRSend, Flags: gorxe.SendSignaled,
			SGList: []gorxe.SGE{{Addr: smr.Addr(), Length: uint32(len(sbuf)), LKey: smr.LKey()}}}}))
		require.NoError(t, sqp.RecvCQ().Wait(ctx))
		wcs := make([]gorxe.WC, 1)
		require.Equal(t, 1, sqp.RecvCQ().Poll(wcs))
		require.Equal(t, gorxe.WCSuccess, wcs[0].Status)
		assert.Equal(t, "own QPs", string(rbuf[:7]))

		closeBoth(t, ctx, client, server)
	})
}
