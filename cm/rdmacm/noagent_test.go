package rdmacm

import (
	"net/netip"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm"
	"github.com/gorxe/gorxe/cm/mad"
	"github.com/gorxe/gorxe/netio"
	"github.com/gorxe/gorxe/packet"
)

// wireLog keeps a copy of every datagram a device sends.
type wireLog struct {
	netio.Conn
	mu   sync.Mutex
	sent []netio.Message
}

func (w *wireLog) Send(msgs []netio.Message) (int, error) {
	w.mu.Lock()
	for _, m := range msgs {
		m.Buf = append([]byte(nil), m.Buf...)
		w.sent = append(w.sent, m)
	}
	w.mu.Unlock()
	return w.Conn.Send(msgs)
}

// mads returns the CM MADs of kind id sent so far, with the datagrams that carried them.
func (w *wireLog) mads(id mad.AttrID) (ms []mad.MAD, pkts []packet.Parsed, msgs []netio.Message) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range w.sent {
		var p packet.Parsed
		if packet.Parse(m.Buf, &p) != nil || p.BTH().DestQP() != cm.QP1 {
			continue
		}
		if x, err := mad.Parse(p.Payload()); err == nil && x.Header().AttrID() == id {
			ms, pkts, msgs = append(ms, x), append(pkts, p), append(msgs, m)
		}
	}
	return ms, pkts, msgs
}

// TestDeviceWithoutAgentRejects: a device that runs no agent refuses a REQ at once with a REJ
// "invalid service ID", as a kernel device (ib_cm) refuses one for a service nobody listens on,
// and a SIDR_REQ with a SIDR_REP "service ID not supported"; the client gets the typed error
// without a single retransmission, no time passing on the bubble's clock. The REJ on the wire
// is the one ib_cm's cm_issue_rej sends. Once an agent runs on the device, the REQs are its own;
// after it stops, the device answers again.
func TestDeviceWithoutAgentRejects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		logs := []*wireLog{{}, {}}
		i := 0
		devs := fabricDevices(t, func(c netio.Conn) netio.Conn { w := logs[i]; i++; w.Conn = c; return w },
			clientAddr, serverAddr.Addr().String())
		// The client uses RDMA-CM's own timeouts: a lost REQ would cost seconds of the bubble's time.
		client, err := Open(devs[0], Config{})
		require.NoError(t, err)
		defer client.Close()

		start := time.Now()
		_, err = client.Dial(ctx, serverAddr, nil)
		require.ErrorIs(t, err, &cm.RejectError{Reason: mad.RejInvalidServiceID})
		_, err = client.DialUD(ctx, serverAddr, nil)
		require.ErrorIs(t, err, &cm.SIDRError{Status: mad.SIDRUnsupported})
		assert.Zero(t, time.Since(start), "the answers needed no timer")
		st, err := client.Stats(ctx)
		require.NoError(t, err)
		assert.Zero(t, st.CM.Retransmits)

		// The REJ answers the REQ field by field.
		reqs, _, _ := logs[0].mads(mad.AttrREQ)
		require.Len(t, reqs, 1)
		req := mad.REQ(reqs[0].Data())
		rejs, pkts, msgs := logs[1].mads(mad.AttrREJ)
		require.Len(t, rejs, 1)
		assert.Equal(t, mad.CMHeader(mad.AttrREJ, reqs[0].Header().TID()), rejs[0].Header().Fields())
		rej := mad.REJ(rejs[0].Data())
		assert.Equal(t, uint32(0), rej.LocalCommID())
		assert.Equal(t, req.LocalCommID(), rej.RemoteCommID())
		assert.Equal(t, mad.MsgTypeREQ, rej.MsgRejected())
		assert.Equal(t, mad.RejInvalidServiceID, rej.Reason())
		assert.Zero(t, rej.RejectedInfoLength())
		assert.Equal(t, make([]byte, len(rej.PrivateData())), rej.PrivateData())
		// It travels as the GSI QP's datagrams do, from the address the REQ was sent to.
		p := &pkts[0]
		assert.Equal(t, packet.UDSendOnly, p.Opcode())
		assert.Equal(t, uint32(cm.QP1), p.BTH().DestQP())
		assert.Equal(t, uint16(packet.DefaultPKey), p.BTH().PKey())
		assert.True(t, p.BTH().AckReq())
		assert.Equal(t, uint32(packet.GSIQKey), p.DETH().QKey())
		assert.Equal(t, uint32(cm.QP1), p.DETH().SrcQP())
		assert.Equal(t, netip.AddrPortFrom(serverAddr.Addr(), packet.DefaultUDPSourcePort(cm.QP1)), msgs[0].Src)
		assert.Equal(t, netip.AddrPortFrom(netip.MustParseAddr(clientAddr), gorxe.DefaultPort), msgs[0].Dst)
		assert.Equal(t, uint8(cm.DefaultHopLimit), msgs[0].TTL)

		// The SIDR_REP names the request and the service.
		sreqs, _, _ := logs[0].mads(mad.AttrSIDRREQ)
		require.Len(t, sreqs, 1)
		sreps, _, _ := logs[1].mads(mad.AttrSIDRREP)
		require.Len(t, sreps, 1)
		assert.Equal(t, mad.CMHeader(mad.AttrSIDRREP, sreqs[0].Header().TID()), sreps[0].Header().Fields())
		srep := mad.SIDRREP(sreps[0].Data())
		sreq := mad.SIDRREQ(sreqs[0].Data())
		assert.Equal(t, sreq.RequestID(), srep.RequestID())
		assert.Equal(t, mad.SIDRUnsupported, srep.Status())
		assert.Equal(t, sreq.ServiceID(), srep.ServiceID())
		assert.Zero(t, srep.QPN())
		assert.Zero(t, srep.QKey())

		// An agent on the device takes QP 1 over; once it stops, the device answers again.
		server, err := Open(devs[1], fastCM)
		require.NoError(t, err)
		l, err := server.Listen(ctx, serverAddr, nil)
		require.NoError(t, err)
		c, s := pairOn(t, ctx, client, l, nil)
		require.NoError(t, c.Close())
		require.NoError(t, s.Close())
		<-c.Done()
		<-s.Done()
		require.NoError(t, l.Close())
		require.NoError(t, server.Close())
		_, err = client.Dial(ctx, serverAddr, nil)
		require.ErrorIs(t, err, &cm.RejectError{Reason: mad.RejInvalidServiceID})
	})
}
