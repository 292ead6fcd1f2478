package rdmacm

import (
	"context"
	"net/netip"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm"
	"github.com/gorxe/gorxe/cm/mad"
)

var (
	serverAddr = netip.MustParseAddrPort("10.0.0.2:7174")
	clientAddr = "10.0.0.1"
)

// pair connects a client on as[0] to a listener on as[1] and returns both ends.
func pair(t *testing.T, ctx context.Context, as []*Agent, copts, sopts *Options) (client, server *Conn) {
	t.Helper()
	l, err := as[1].Listen(ctx, serverAddr, sopts)
	require.NoError(t, err)
	defer l.Close()
	return pairOn(t, ctx, as[0], l, copts)
}

// pairOn connects a client on a to the listener l and returns both ends.
func pairOn(t *testing.T, ctx context.Context, a *Agent, l *Listener, copts *Options) (client, server *Conn) {
	t.Helper()
	type res struct {
		c   *Conn
		err error
	}
	accepted := make(chan res, 1)
	go func() {
		c, err := l.Accept(ctx)
		accepted <- res{c, err}
	}()
	client, err := a.Dial(ctx, l.Addr(), copts)
	require.NoError(t, err)
	r := <-accepted
	require.NoError(t, r.err)
	return client, r.c
}

// exchange sends one message each way over the connection and checks it arrives.
func exchange(t *testing.T, ctx context.Context, from, to *Conn, msg string) {
	t.Helper()
	sbuf := []byte(msg)
	rbuf := make([]byte, 64)
	smr, err := from.PD().RegMR(sbuf, gorxe.AccessLocalWrite)
	require.NoError(t, err)
	defer smr.Dereg()
	rmr, err := to.PD().RegMR(rbuf, gorxe.AccessLocalWrite)
	require.NoError(t, err)
	defer rmr.Dereg()
	require.NoError(t, to.QP().PostRecv([]gorxe.RecvWR{{ID: 1, SGList: []gorxe.SGE{{Addr: rmr.Addr(), Length: 64, LKey: rmr.LKey()}}}}))
	require.NoError(t, from.QP().PostSend([]gorxe.SendWR{{ID: 2, Opcode: gorxe.WRSend, Flags: gorxe.SendSignaled,
		SGList: []gorxe.SGE{{Addr: smr.Addr(), Length: uint32(len(sbuf)), LKey: smr.LKey()}}}}))
	for _, cq := range []*gorxe.CQ{from.SendCQ(), to.RecvCQ()} {
		require.NoError(t, cq.Wait(ctx))
		wcs := make([]gorxe.WC, 1)
		require.Equal(t, 1, cq.Poll(wcs))
		require.Equal(t, gorxe.WCSuccess, wcs[0].Status, "%+v", wcs[0])
	}
	assert.Equal(t, msg, string(rbuf[:len(msg)]))
}

// drain collects a connection's events until Done.
func drain(t *testing.T, ctx context.Context, c *Conn) []EventType {
	t.Helper()
	var got []EventType
	for {
		select {
		case e := <-c.Events():
			got = append(got, e.Type)
		case <-c.Done():
			for {
				select {
				case e := <-c.Events():
					got = append(got, e.Type)
				default:
					return got
				}
			}
		case <-ctx.Done():
			require.Failf(t, "connection not gone", "events so far %v", got)
		}
	}
}

// closeBoth closes both ends of a connection and waits until each is gone.
func closeBoth(t *testing.T, ctx context.Context, client, server *Conn) {
	t.Helper()
	require.NoError(t, client.Close())
	require.NoError(t, server.Close())
	drain(t, ctx, client)
	drain(t, ctx, server)
}

func TestDialAcceptDisconnect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		devs := fabricDevices(t, nil, clientAddr, "10.0.0.2")
		as := agents(t, devs...)
		client, server := pair(t, ctx, as, &Options{PrivateData: []byte("hello")}, &Options{PrivateData: []byte("welcome")})

		assert.Equal(t, "hello", string(server.PrivateData()[:5]))
		assert.Equal(t, "welcome", string(client.PrivateData()[:7]))
		assert.Equal(t, serverAddr, client.RemoteAddr())
		assert.Equal(t, client.LocalAddr(), server.RemoteAddr())
		assert.Equal(t, client.QP().QPN(), server.Attrs().RemoteQPN)
		assert.Equal(t, server.QP().QPN(), client.Attrs().RemoteQPN)
		assert.Equal(t, client.Attrs().SQPSN, server.Attrs().RQPSN)
		assert.Equal(t, gorxe.QPStateRTS, client.QP().State())
		assert.Equal(t, gorxe.QPStateRTS, server.QP().State())

		exchange(t, ctx, client, server, "ping")
		exchange(t, ctx, server, client, "pong")

		require.NoError(t, client.Disconnect(ctx))
		assert.Equal(t, gorxe.QPStateErr, client.QP().State())
		require.NoError(t, client.Close())
		assert.Equal(t, []EventType{EventEstablished, EventDisconnected, EventTimewaitExit}, drain(t, ctx, client))
		require.NoError(t, server.Close())
		assert.Equal(t, []EventType{EventEstablished, EventDisconnected, EventTimewaitExit}, drain(t, ctx, server))
	})
}

// TestServerDisconnects checks the passive side can hang up too, and that the active side's QP
// is flushed when the DREQ arrives.
func TestServerDisconnects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		as := twoAgents(t)
		client, server := pair(t, ctx, as, nil, nil)
		buf := make([]byte, 16)
		mr, err := client.PD().RegMR(buf, gorxe.AccessLocalWrite)
		require.NoError(t, err)
		require.NoError(t, client.QP().PostRecv([]gorxe.RecvWR{{ID: 9, SGList: []gorxe.SGE{{Addr: mr.Addr(), Length: 16, LKey: mr.LKey()}}}}))

		require.NoError(t, server.Close())
		require.NoError(t, client.RecvCQ().Wait(ctx))
		wcs := make([]gorxe.WC, 1)
		require.Equal(t, 1, client.RecvCQ().Poll(wcs))
		assert.Equal(t, gorxe.WCWRFlushErr, wcs[0].Status)
		require.NoError(t, mr.Dereg())
		require.NoError(t, client.Close())
		assert.Equal(t, []EventType{EventEstablished, EventDisconnected, EventTimewaitExit}, drain(t, ctx, client))
		drain(t, ctx, server)
	})
}

// TestServerDisconnectsLeavingQP: with LeaveQPOnDREQ (librdmacm's behaviour, which the C library
// asks for) the DREQ leaves the active side's QP in RTS and its posted receive in place; the
// client's own hang-up flushes it.
func TestServerDisconnectsLeavingQP(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		as := twoAgents(t)
		client, server := pair(t, ctx, as, &Options{LeaveQPOnDREQ: true}, nil)
		buf := make([]byte, 16)
		mr, err := client.PD().RegMR(buf, gorxe.AccessLocalWrite)
		require.NoError(t, err)
		require.NoError(t, client.QP().PostRecv([]gorxe.RecvWR{{ID: 9, SGList: []gorxe.SGE{{Addr: mr.Addr(), Length: 16, LKey: mr.LKey()}}}}))

		require.NoError(t, server.Close())
		for e := range client.Events() {
			if e.Type == EventDisconnected {
				break
			}
		}
		synctest.Wait()
		assert.Equal(t, gorxe.QPStateRTS, client.QP().State())
		wcs := make([]gorxe.WC, 1)
		assert.Equal(t, 0, client.RecvCQ().Poll(wcs), "the posted receive stays")

		require.NoError(t, client.Disconnect(ctx))
		assert.Equal(t, gorxe.QPStateErr, client.QP().State())
		require.NoError(t, client.RecvCQ().Wait(ctx))
		require.Equal(t, 1, client.RecvCQ().Poll(wcs))
		assert.Equal(t, gorxe.WCWRFlushErr, wcs[0].Status)
		require.NoError(t, mr.Dereg())
		require.NoError(t, client.Close())
		drain(t, ctx, client)
		drain(t, ctx, server)
	})
}

func TestNoListenerRejects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		as := twoAgents(t)
		_, err := as[0].Dial(ctx, serverAddr, nil)
		require.ErrorIs(t, err, cm.ErrRejected)
		require.ErrorIs(t, err, &cm.RejectError{Reason: mad.RejInvalidServiceID})

		// A listener on another address of the port space does not take it either.
		l, err := as[1].Listen(ctx, netip.AddrPortFrom(netip.IPv4Unspecified(), 9999), nil)
		require.NoError(t, err)
		defer l.Close()
		_, err = as[0].Dial(ctx, serverAddr, nil)
		require.ErrorIs(t, err, &cm.RejectError{Reason: mad.RejInvalidServiceID})
	})
}

func TestListenAddressInUse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		as := agents(t, fabricDevices(t, nil, "10.0.0.2")...)
		l, err := as[0].Listen(ctx, serverAddr, nil)
		require.NoError(t, err)
		defer l.Close()
		_, err = as[0].Listen(ctx, serverAddr, nil)
		require.ErrorIs(t, err, cm.ErrServiceIDInUse)
		_, err = as[0].Listen(ctx, netip.MustParseAddrPort("10.9.9.9:1"), nil)
		require.ErrorIs(t, err, ErrAddress)
	})
}
