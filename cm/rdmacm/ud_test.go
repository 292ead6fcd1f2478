package rdmacm

import (
	"context"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm"
	"github.com/gorxe/gorxe/cm/mad"
)

// udSend sends msg from one UD endpoint to the QP dest over ah with the sender's QPN as immediate
// data (udaddy's way of telling the server whom to answer) and returns the receiver's completion.
func udSend(t *testing.T, ctx context.Context, from, to *UDConn, ah *gorxe.AH, dest uint32, msg string) gorxe.WC {
	t.Helper()
	const grh = 40
	sbuf := []byte(msg)
	rbuf := make([]byte, grh+64)
	smr, err := from.PD().RegMR(sbuf, gorxe.AccessLocalWrite)
	require.NoError(t, err)
	defer smr.Dereg()
	rmr, err := to.PD().RegMR(rbuf, gorxe.AccessLocalWrite)
	require.NoError(t, err)
	defer rmr.Dereg()
	require.NoError(t, to.QP().PostRecv([]gorxe.RecvWR{{ID: 1, SGList: []gorxe.SGE{{Addr: rmr.Addr(), Length: uint32(len(rbuf)), LKey: rmr.LKey()}}}}))
	require.NoError(t, from.QP().PostSend([]gorxe.SendWR{{ID: 2, Opcode: gorxe.WRSendWithImm, Flags: gorxe.SendSignaled,
		ImmData: from.QP().QPN(), UD: gorxe.UDInfo{AH: ah, RemoteQPN: dest, RemoteQKey: from.RemoteQKey()},
		SGList: []gorxe.SGE{{Addr: smr.Addr(), Length: uint32(len(sbuf)), LKey: smr.LKey()}}}}))
	var got gorxe.WC
	for i, cq := range []*gorxe.CQ{from.SendCQ(), to.RecvCQ()} {
		require.NoError(t, cq.Wait(ctx))
		wcs := make([]gorxe.WC, 1)
		require.Equal(t, 1, cq.Poll(wcs))
		require.Equal(t, gorxe.WCSuccess, wcs[0].Status, "%+v", wcs[0])
		if i == 1 {
			got = wcs[0]
		}
	}
	assert.Equal(t, msg, string(rbuf[grh:grh+len(msg)]))
	return got
}

// TestUD resolves a UD endpoint through SIDR and exchanges a message each way, the client first
// with the QPN and Q_Key of the SIDR_REP, the server back to the source QP of what it received.
func TestUD(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		devs := fabricDevices(t, nil, clientAddr, serverAddr.Addr().String())
		as := agents(t, devs...)
		l, err := as[1].ListenUD(ctx, netip.AddrPortFrom(netip.IPv4Unspecified(), serverAddr.Port()), &UDOptions{
			Options: Options{PrivateData: []byte("welcome")}})
		require.NoError(t, err)
		defer l.Close()
		accepted := make(chan *UDConn, 1)
		go func() {
			c, err := l.Accept(ctx, nil)
			assert.NoError(t, err)
			accepted <- c
		}()
		client, err := as[0].DialUD(ctx, serverAddr, &UDOptions{Options: Options{PrivateData: []byte("hello"),
			Source: netip.AddrPortFrom(netip.MustParseAddr(clientAddr), 40001)}, TrafficClass: 0x20})
		require.NoError(t, err)
		defer client.Close()
		server := <-accepted
		require.NotNil(t, server)
		defer server.Close()

		assert.Equal(t, server.QP().QPN(), client.RemoteQPN())
		assert.Equal(t, uint32(mad.UDPQKey), client.RemoteQKey())
		assert.Equal(t, uint32(mad.UDPQKey), server.RemoteQKey())
		assert.Zero(t, server.RemoteQPN(), "a SIDR_REQ does not name the client's QP")
		assert.Equal(t, "welcome", string(client.PrivateData()[:7]))
		assert.Equal(t, "hello", string(server.PrivateData()[:5]))
		assert.Equal(t, serverAddr, client.RemoteAddr())
		assert.Equal(t, netip.MustParseAddrPort(clientAddr+":40001"), server.RemoteAddr())
		assert.Equal(t, serverAddr, server.LocalAddr())
		assert.Equal(t, gorxe.GIDFromAddr(serverAddr.Addr()), client.RemoteGID())
		assert.Equal(t, gorxe.GIDFromAddr(netip.MustParseAddr(clientAddr)), server.RemoteGID())
		assert.Equal(t, uint8(0x20), client.AH().Attr().GRH.TrafficClass)

		wc := udSend(t, ctx, client, server, client.AH(), client.RemoteQPN(), "ping")
		require.Equal(t, client.QP().QPN(), wc.SrcQP)
		require.Equal(t, client.QP().QPN(), wc.ImmData)
		require.NotZero(t, wc.WCFlags&gorxe.WCFlagGRH)
		wc = udSend(t, ctx, server, client, server.AH(), wc.SrcQP, "pong")
		require.Equal(t, server.QP().QPN(), wc.SrcQP)
	})
}

// TestUDRefused: what the client sees when no UD endpoint serves the port.
func TestUDRefused(t *testing.T) {
	inBubble(t, "no listener", func(t *testing.T) {
		ctx, as := testCtx(t), twoAgents(t)
		_, err := as[0].DialUD(ctx, serverAddr, nil)
		require.ErrorIs(t, err, cm.ErrSIDRRefused)
		require.ErrorIs(t, err, &cm.SIDRError{Status: mad.SIDRUnsupported})
	})
	inBubble(t, "a TCP listener on the port", func(t *testing.T) {
		ctx, as := testCtx(t), twoAgents(t)
		serverListener(t, ctx, as[1], nil)
		_, err := as[0].DialUD(ctx, serverAddr, nil)
		require.ErrorIs(t, err, &cm.SIDRError{Status: mad.SIDRUnsupported})
	})
	inBubble(t, "listener closed with requests waiting", func(t *testing.T) {
		ctx, as := testCtx(t), twoAgents(t)
		l, err := as[1].ListenUD(ctx, netip.AddrPortFrom(netip.IPv4Unspecified(), 7001), nil)
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() {
			_, err := as[0].DialUD(ctx, netip.MustParseAddrPort("10.0.0.2:7001"), nil)
			done <- err
		}()
		// Wait until the request is in the backlog, then close without accepting.
		synctest.Wait()
		require.Len(t, l.core.backlog, 1)
		require.NoError(t, l.Close())
		require.ErrorIs(t, <-done, &cm.SIDRError{Status: mad.SIDRReject})
		_, err = l.Accept(ctx, nil)
		require.ErrorIs(t, err, ErrClosed)
	})
	inBubble(t, "bad address", func(t *testing.T) {
		ctx, as := testCtx(t), twoAgents(t)
		_, err := as[0].DialUD(ctx, netip.MustParseAddrPort("10.0.0.2:0"), nil)
		require.ErrorIs(t, err, ErrAddress)
		_, err = as[1].ListenUD(ctx, netip.MustParseAddrPort("10.9.9.9:7"), nil)
		require.ErrorIs(t, err, ErrAddress)
	})
}

// TestUDTimeout: a SIDR_REQ nobody answers fails with cm.ErrTimeout after the retries, and a
// cancelled DialUD returns the context's error.
func TestUDTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		devs := fabricDevices(t, nil, clientAddr)
		cfg := fastCM
		cfg.CM.MaxCMRetries = 2
		a, err := Open(devs[0], cfg)
		require.NoError(t, err)
		defer a.Close()
		_, err = a.DialUD(ctx, serverAddr, nil)
		require.ErrorIs(t, err, cm.ErrTimeout)
		st, err := a.Stats(ctx)
		require.NoError(t, err)
		assert.Equal(t, uint64(2), st.CM.Retransmits)

		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, err = a.DialUD(cctx, serverAddr, nil)
		require.ErrorIs(t, err, context.Canceled)
	})
}

// TestUDRefusedByAgent: SIDR_REQs that reach a UD listener but that RDMA-CM cannot take are
// answered status 2 (rejected), as ib_cm answers when the kernel's RDMA-CM refuses one.
func TestUDRefusedByAgent(t *testing.T) {
	cma := func(dst string) []byte {
		b, err := mad.AppendCMAPrivateData(nil, &mad.CMAHeaderFields{SrcPort: 5, Src: netip.MustParseAddr(clientAddr),
			Dst: netip.MustParseAddr(dst)}, nil)
		require.NoError(t, err)
		return b
	}
	for _, tc := range []struct {
		name  string
		pdata []byte
	}{
		{"no CMA header", nil},
		{"another destination", cma("10.0.0.3")},
	} {
		inBubble(t, tc.name, func(t *testing.T) {
			ctx, as := testCtx(t), twoAgents(t)
			l, err := as[1].ListenUD(ctx, serverAddr, nil)
			require.NoError(t, err)
			defer l.Close()
			a := as[0].a
			reply := make(chan cm.Event, 1)
			require.NoError(t, a.do(ctx, func(now time.Time, out *cm.Output) error {
				id, err := a.mgr.ResolveSIDR(now, cm.SIDRParams{ServiceID: l.core.sid, RemoteGID: serverAddr.Addr().As16(),
					PrivateData: tc.pdata}, out)
				if a.ud.resolving == nil {
					a.ud.resolving = make(map[cm.ConnID]chan cm.Event)
				}
				a.ud.resolving[id] = reply
				return err
			}))
			select {
			case e := <-reply:
				require.ErrorIs(t, cm.SIDRResult(e), &cm.SIDRError{Status: mad.SIDRReject})
			case <-ctx.Done():
				require.Failf(t, "no SIDR reply", "%v", ctx.Err())
			}
			require.Empty(t, l.core.backlog)
		})
	}
}

// A UD listener holds as many SIDR_REQs as its backlog (Options.Backlog, default 16), so a client
// that resolves more UD QPs at once than the default, as perftest -q does, has them all answered;
// a SIDR_REQ that finds the backlog full is answered status 2 (rejected), as ib_cm answers one the
// kernel's RDMA-CM has no room for.
func TestUDListenBacklog(t *testing.T) {
	for _, tc := range []struct {
		name    string
		backlog int
		holds   int
	}{
		{"default", 0, backlogLen},
		{"longer", backlogLen + 4, backlogLen + 4},
	} {
		inBubble(t, tc.name, func(t *testing.T) {
			ctx, as := testCtx(t), twoAgents(t)
			l, err := as[1].ListenUD(ctx, serverAddr, &UDOptions{Options: Options{Backlog: tc.backlog}})
			require.NoError(t, err)
			defer l.Close()
			dialed := make(chan error, tc.holds)
			conns := make(chan *UDConn, tc.holds)
			for range tc.holds {
				go func() {
					c, err := as[0].DialUD(ctx, serverAddr, nil)
					if err == nil {
						conns <- c
					}
					dialed <- err
				}()
			}
			// Nobody accepts until every request is in.
			synctest.Wait()
			require.Len(t, l.core.backlog, tc.holds, "the backlog never filled")
			_, err = as[0].DialUD(ctx, serverAddr, nil)
			require.ErrorIs(t, err, &cm.SIDRError{Status: mad.SIDRReject}, "a request beyond the backlog")
			var accepted []*UDConn
			for range tc.holds {
				c, err := l.Accept(ctx, nil)
				require.NoError(t, err)
				accepted = append(accepted, c)
			}
			for range tc.holds {
				assert.NoError(t, <-dialed)
			}
			close(conns)
			qpns := make(map[uint32]bool)
			for c := range conns {
				qpns[c.RemoteQPN()] = true
				require.NoError(t, c.Close())
			}
			for _, c := range accepted {
				assert.True(t, qpns[c.QP().QPN()], "no client has the QP of accepted endpoint %d", c.QP().QPN())
				require.NoError(t, c.Close())
			}
		})
	}
}

// TestUDOwnQP resolves a UD endpoint for QPs the callers keep themselves (rdma_connect and
// rdma_accept with conn_param's qp_num and no QP on the id): the SIDR_REP names the server's QP
// number, and each side gets an address handle on a PD of its own.
func TestUDOwnQP(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		devs := fabricDevices(t, nil, clientAddr, serverAddr.Addr().String())
		as := agents(t, devs...)
		l, err := as[1].ListenUD(ctx, serverAddr, nil)
		require.NoError(t, err)
		defer l.Close()
		accepted := make(chan *UDConn, 1)
		go func() {
			c, err := l.Accept(ctx, &UDOptions{Options: Options{QPN: 0x4321}})
			assert.NoError(t, err)
			accepted <- c
		}()
		client, err := as[0].DialUD(ctx, serverAddr, &UDOptions{Options: Options{QPN: 0x1234}})
		require.NoError(t, err)
		server := <-accepted
		require.NotNil(t, server)
		assert.Equal(t, uint32(0x4321), client.RemoteQPN())
		assert.Nil(t, client.QP())
		assert.Nil(t, server.QP())
		require.NotNil(t, client.AH())
		assert.Equal(t, gorxe.GIDFromAddr(serverAddr.Addr()), gorxe.GID(client.AH().Attr().GRH.DGID))
		require.NoError(t, client.Close())
		require.NoError(t, server.Close())
	})
}
