package rdmacm

import (
	"context"
	"net/netip"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm/mad"
	"github.com/gorxe/gorxe/netio"
)

// closeEnv is a client and a server device with agents, and what a case of
// TestBlockedCallsWakeOnClose may close.
type closeEnv struct {
	devs     []*gorxe.Device
	as       []*Agent
	listener interface{ Close() error }
}

// closeDevice closes device i of the environment.
func closeDevice(i int) func(e *closeEnv) { return func(e *closeEnv) { e.devs[i].Close() } }

// closeListener closes the listener the case opened.
func closeListener(e *closeEnv) { e.listener.Close() }

// TestBlockedCallsWakeOnClose: every call of the package that waits returns, at once and with a
// typed error naming the call, when the device or the listener it waits on is closed, even with a
// context that never ends; nothing is left running afterwards.
func TestBlockedCallsWakeOnClose(t *testing.T) {
	nobody := netip.MustParseAddrPort("10.0.0.99:7174") // no device has the address
	never := context.Background()
	for _, tc := range []struct {
		name string
		lose map[mad.AttrID]int // MADs the client loses
		// start prepares the case and returns the call that blocks until close.
		start func(t *testing.T, e *closeEnv) func() error
		close func(e *closeEnv)
		want  error
		op    string // the call the error names
	}{
		{
			name: "Listener.Accept, device closed",
			start: func(t *testing.T, e *closeEnv) func() error {
				l := listen(t, e)
				return func() error { _, err := l.Accept(never); return err }
			},
			close: closeDevice(1), want: gorxe.ErrDeviceClosed, op: "accept",
		},
		{
			name: "Listener.Accept, listener closed",
			start: func(t *testing.T, e *closeEnv) func() error {
				l := listen(t, e)
				return func() error { _, err := l.Accept(never); return err }
			},
			close: closeListener, want: ErrClosed,
		},
		{
			name: "Listener.Next, device closed",
			start: func(t *testing.T, e *closeEnv) func() error {
				l := listen(t, e)
				return func() error { _, err := l.Next(never); return err }
			},
			close: closeDevice(1), want: gorxe.ErrDeviceClosed, op: "next",
		},
		{
			name: "UDListener.Next, device closed",
			start: func(t *testing.T, e *closeEnv) func() error {
				l := listenUD(t, e)
				return func() error { _, err := l.Next(never); return err }
			},
			close: closeDevice(1), want: gorxe.ErrDeviceClosed, op: "next",
		},
		{
			name: "UDListener.Accept, device closed",
			start: func(t *testing.T, e *closeEnv) func() error {
				l := listenUD(t, e)
				return func() error { _, err := l.Accept(never, nil); return err }
			},
			close: closeDevice(1), want: gorxe.ErrDeviceClosed, op: "accept",
		},
		{
			name: "UDListener.Accept, listener closed",
			start: func(t *testing.T, e *closeEnv) func() error {
				l := listenUD(t, e)
				return func() error { _, err := l.Accept(never, nil); return err }
			},
			close: closeListener, want: ErrClosed,
		},
		{
			name: "Dial waiting for a REP",
			start: func(t *testing.T, e *closeEnv) func() error {
				return func() error { _, err := e.as[0].Dial(never, nobody, nil); return err }
			},
			close: closeDevice(0), want: gorxe.ErrDeviceClosed, op: "dial",
		},
		{
			name: "DialUD waiting for a SIDR_REP",
			start: func(t *testing.T, e *closeEnv) func() error {
				return func() error { _, err := e.as[0].DialUD(never, nobody, nil); return err }
			},
			close: closeDevice(0), want: gorxe.ErrDeviceClosed, op: "dial",
		},
		{
			// The client's RTUs are lost and it sends nothing: Accept waits for the REP's
			// retransmissions to bring one.
			name: "Accept waiting for the RTU",
			lose: map[mad.AttrID]int{mad.AttrRTU: 100},
			start: func(t *testing.T, e *closeEnv) func() error {
				l := listen(t, e)
				go func() {
					if c, err := e.as[0].Dial(never, serverAddr, nil); err == nil {
						c.Close()
					}
				}()
				return func() error { _, err := l.Accept(never); return err }
			},
			close: closeDevice(1), want: gorxe.ErrDeviceClosed, op: "accept",
		},
		{
			// The server never hears the client's DREQ: Disconnect waits for a DREP.
			name: "Disconnect waiting for the DREP",
			lose: map[mad.AttrID]int{mad.AttrDREQ: 100},
			start: func(t *testing.T, e *closeEnv) func() error {
				client, server := pair(t, never, e.as, nil, nil)
				t.Cleanup(func() { client.Close(); server.Close() })
				return func() error { return client.Disconnect(never) }
			},
			close: closeDevice(0), want: gorxe.ErrDeviceClosed, op: "disconnect",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				d := newDropper(tc.lose)
				devs := fabricDevices(t, func(c netio.Conn) netio.Conn {
					if d.Conn == nil {
						return d.wrap(c)
					}
					return c
				}, clientAddr, serverAddr.Addr().String())
				e := &closeEnv{devs: devs, as: agents(t, devs...)}
				call := tc.start(t, e)
				done := make(chan error, 1)
				go func() { done <- call() }()
				synctest.Wait()
				select {
				case err := <-done:
					require.Failf(t, "the call did not wait", "err %v", err)
				default:
				}
				tc.close(e)
				synctest.Wait() // no time passes: the call must end on the close alone
				select {
				case err := <-done:
					require.ErrorIs(t, err, tc.want)
					assert.Contains(t, err.Error(), tc.op)
				default:
					require.Fail(t, "the call still waits after the close")
				}
			})
			goleak.VerifyNone(t)
		})
	}
}

// listen opens the case's listener on the server.
func listen(t *testing.T, e *closeEnv) *Listener {
	l := serverListener(t, t.Context(), e.as[1], nil)
	e.listener = l
	return l
}

// listenUD opens the case's UD listener on the server.
func listenUD(t *testing.T, e *closeEnv) *UDListener {
	l, err := e.as[1].ListenUD(t.Context(), serverAddr, nil)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	e.listener = l
	return l
}

// TestCallsOnAClosedDevice: Dial, Listen and their UD forms on a closed device fail with an error
// that matches gorxe.ErrDeviceClosed and names the call, not the verb underneath that found the
// device closed (alloc_pd), whether the device's agent was opened before the close or not.
func TestCallsOnAClosedDevice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		devs := fabricDevices(t, nil, clientAddr, serverAddr.Addr().String())
		a, err := Open(devs[1], fastCM)
		require.NoError(t, err)
		defer a.Close()
		for _, d := range devs {
			require.NoError(t, d.Close())
		}
		_, err = Open(devs[0], fastCM)
		require.ErrorIs(t, err, gorxe.ErrDeviceClosed)
		for _, c := range []struct {
			op   string
			call func() error
		}{
			{"dial", func() error { _, err := Dial(ctx, devs[0], serverAddr, nil); return err }},
			{"listen", func() error { _, err := Listen(ctx, devs[0], serverAddr, nil); return err }},
			{"dial", func() error { _, err := DialUD(ctx, devs[0], serverAddr, nil); return err }},
			{"listen", func() error { _, err := ListenUD(ctx, devs[0], serverAddr, nil); return err }},
			{"dial", func() error { _, err := a.Dial(ctx, netip.MustParseAddrPort(clientAddr+":1"), nil); return err }},
			{"listen", func() error { _, err := a.Listen(ctx, serverAddr, nil); return err }},
			{"dial", func() error { _, err := a.DialUD(ctx, netip.MustParseAddrPort(clientAddr+":1"), nil); return err }},
			{"listen", func() error { _, err := a.ListenUD(ctx, serverAddr, nil); return err }},
		} {
			err := c.call()
			require.ErrorIs(t, err, gorxe.ErrDeviceClosed, c.op)
			assert.Contains(t, err.Error(), "rdmacm: "+c.op+" ")
			assert.NotContains(t, err.Error(), "alloc_pd")
		}
	})
}

// TestConnectionsEndWithTheDevice: closing a device ends its connections at once (Done closes,
// Events reports the disconnection with the cause), and closing them afterwards succeeds: the
// device took their QPs, CQs and PDs with it.
func TestConnectionsEndWithTheDevice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		as := twoAgents(t)
		client, server := pair(t, ctx, as, nil, nil)
		l, err := as[1].ListenUD(ctx, serverAddr, nil)
		require.NoError(t, err)
		defer l.Close()
		accepted := make(chan *UDConn, 1)
		go func() {
			c, err := l.Accept(ctx, nil)
			assert.NoError(t, err)
			accepted <- c
		}()
		uclient, err := as[0].DialUD(ctx, serverAddr, nil)
		require.NoError(t, err)
		userver := <-accepted

		require.NoError(t, as[0].Device().Close())
		<-client.Done()
		var got []Event
		for len(client.Events()) > 0 {
			got = append(got, <-client.Events())
		}
		require.Len(t, got, 2)
		assert.Equal(t, EventEstablished, got[0].Type)
		assert.Equal(t, EventDisconnected, got[1].Type)
		assert.ErrorIs(t, got[1].Err, gorxe.ErrDeviceClosed)
		assert.NoError(t, client.Close())
		assert.NoError(t, uclient.Close())
		assert.ErrorIs(t, client.Disconnect(ctx), gorxe.ErrDeviceClosed)

		// The server's side lives on and hears nothing more from the client.
		require.NoError(t, server.Close())
		require.NoError(t, userver.Close())
		drain(t, ctx, server)
	})
}
