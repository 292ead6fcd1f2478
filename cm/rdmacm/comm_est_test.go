package rdmacm

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm"
	"github.com/gorxe/gorxe/cm/mad"
	"github.com/gorxe/gorxe/netio"
)

// TestCommEstEstablishesWithoutRTU loses the client's RTU: the client's first SEND reaches the
// server's QP, whose Communication Established event establishes the connection, so Accept
// returns without the REP being retransmitted. The CM response timeout is at its largest
// (2^31 × 4.096 µs, hours), so only the event can end the wait; the application still reads the
// event from the device.
func TestCommEstEstablishesWithoutRTU(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		cd := newDropper(map[mad.AttrID]int{mad.AttrRTU: 1})
		devs := fabricDevices(t, func(c netio.Conn) netio.Conn {
			if cd.Conn == nil {
				return cd.wrap(c)
			}
			return c
		}, clientAddr, "10.0.0.2")
		slow := Config{CM: cm.Config{CMResponseTimeout: 31, PacketLifeTime: 8, CAAckDelay: 8}}
		var as []*Agent
		for _, d := range devs {
			a, err := Open(d, slow)
			require.NoError(t, err)
			t.Cleanup(func() { a.Close() })
			as = append(as, a)
		}

		pd, err := devs[1].AllocPD()
		require.NoError(t, err)
		defer pd.Dealloc()
		rbuf := make([]byte, 64)
		rmr, err := pd.RegMR(rbuf, gorxe.AccessLocalWrite)
		require.NoError(t, err)
		defer rmr.Dereg()
		l, err := as[1].Listen(ctx, serverAddr, &Options{PD: pd,
			Recv: []gorxe.RecvWR{{ID: 7, SGList: []gorxe.SGE{{Addr: rmr.Addr(), Length: 64, LKey: rmr.LKey()}}}}})
		require.NoError(t, err)
		defer l.Close()
		type accepted struct {
			c   *Conn
			err error
		}
		acc := make(chan accepted, 1)
		go func() {
			c, err := l.Accept(ctx)
			acc <- accepted{c, err}
		}()

		client, err := as[0].Dial(ctx, serverAddr, nil)
		require.NoError(t, err)
		defer client.Close()
		msg := []byte("before the RTU")
		smr, err := client.PD().RegMR(msg, gorxe.AccessLocalWrite)
		require.NoError(t, err)
		require.NoError(t, client.QP().PostSend([]gorxe.SendWR{{ID: 1, Opcode: gorxe.WRSend, Flags: gorxe.SendSignaled,
			SGList: []gorxe.SGE{{Addr: smr.Addr(), Length: uint32(len(msg)), LKey: smr.LKey()}}}}))

		a := <-acc
		require.NoError(t, a.err)
		server := a.c
		defer server.Close()
		assert.Equal(t, gorxe.QPStateRTS, server.QP().State(), "Accept returns the QP ready to send")
		require.NoError(t, server.RecvCQ().Wait(ctx))
		wcs := make([]gorxe.WC, 1)
		require.Equal(t, 1, server.RecvCQ().Poll(wcs))
		require.Equal(t, gorxe.WCSuccess, wcs[0].Status, "%+v", wcs[0])
		assert.Equal(t, string(msg), string(rbuf[:len(msg)]))

		require.NoError(t, cd.waitLost(ctx, mad.AttrRTU, 1), "the RTU was lost")
		st, err := as[1].Stats(ctx)
		require.NoError(t, err)
		assert.Zero(t, st.CM.Message(mad.AttrRTU).Received, "no RTU reached the server")
		assert.Zero(t, st.CM.Message(mad.AttrREP).Retransmits, "the REP was not retransmitted")
		assert.Zero(t, st.CM.Retransmits)

		for {
			ev, err := devs[1].GetAsyncEvent(ctx)
			require.NoError(t, err)
			if ev.Type == gorxe.EventCommEst {
				assert.Equal(t, server.QP(), ev.QP, "the application sees the event of the server's QP")
				break
			}
			require.Equal(t, gorxe.EventPortActive, ev.Type, "events before COMM_EST: %v", ev)
		}

		require.NoError(t, client.Disconnect(ctx))
		require.NoError(t, smr.Dereg())
		require.NoError(t, client.Close())
		require.NoError(t, server.Close())
		assert.Equal(t, []EventType{EventEstablished, EventDisconnected, EventTimewaitExit}, drain(t, ctx, client))
		assert.Equal(t, []EventType{EventEstablished, EventDisconnected, EventTimewaitExit}, drain(t, ctx, server))
	})
}
