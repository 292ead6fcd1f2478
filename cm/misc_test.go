package cm

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cm/mad"
	"github.com/gorxe/gorxe/packet"
)

func TestSIDR(t *testing.T) {
	udpSID := mad.ServiceID(mad.PortSpaceUDP, 7174)
	t.Run("resolved", func(t *testing.T) {
		w := newWire(t, Config{}, Config{})
		require.NoError(t, w.m[sideB].Listen(udpSID))
		var a ConnID
		w.do(sideA, func(m *Manager, out *Output) (err error) {
			a, err = m.ResolveSIDR(w.now, SIDRParams{ServiceID: udpSID, RemoteGID: gidB, PrivateData: []byte{0, 0x40}}, out)
			return err
		})
		evs := w.take(sideB)
		require.Equal(t, []EventType{EventSIDRREQReceived}, types(evs))
		require.Equal(t, udpSID, evs[0].ServiceID)
		require.Equal(t, uint16(packet.DefaultPKey), evs[0].Attrs.PKey)
		require.Equal(t, []byte{0, 0x40}, evs[0].PrivateData[:2])
		b := evs[0].Conn
		require.Equal(t, StateSIDRREQRcvd, w.state(sideB, b))
		require.Equal(t, StateSIDRREQSent, w.state(sideA, a))

		w.do(sideB, func(m *Manager, out *Output) error {
			return m.ReplySIDR(w.now, b, SIDRReply{Status: mad.SIDRSuccess, QPN: 0x33, QKey: mad.UDPQKey, Info: []byte{7}}, out)
		})
		evs = w.take(sideA)
		require.Equal(t, []EventType{EventSIDRREPReceived}, types(evs))
		require.Equal(t, a, evs[0].Conn)
		require.Equal(t, mad.SIDRSuccess, evs[0].SIDRStatus)
		require.Equal(t, uint32(0x33), evs[0].QPN)
		require.Equal(t, uint32(mad.UDPQKey), evs[0].QKey)
		require.Equal(t, []byte{7}, evs[0].ARI)
		require.Zero(t, w.m[sideA].Len())
		rep := mad.MAD(w.sent[sideB][0])
		require.Equal(t, w.sent[sideA][0].Header().TID(), rep.Header().TID(), "a SIDR_REP echoes the TID")
		require.Equal(t, uint32(a), mad.SIDRREP(rep.Data()).RequestID())

		// A late duplicate of the request gets the same answer, not a new event.
		var out Output
		w.m[sideB].Receive(w.now, w.addr[sideA], w.sent[sideA][0], &out)
		require.Empty(t, out.Events)
		require.Len(t, out.Datagrams, 1)
		require.Equal(t, []byte(rep), out.Datagrams[0].MAD)
		require.ErrorIs(t, w.m[sideB].ReplySIDR(w.now, b, SIDRReply{}, &out), ErrState)
		w.settle()
		require.Zero(t, w.m[sideB].Len())
		require.Empty(t, w.take(sideB), "SIDR requests leave no timewait event")
	})
	t.Run("no listener", func(t *testing.T) {
		w := newWire(t, Config{}, Config{})
		w.do(sideA, func(m *Manager, out *Output) error {
			_, err := m.ResolveSIDR(w.now, SIDRParams{ServiceID: udpSID, RemoteGID: gidB}, out)
			return err
		})
		evs := w.take(sideA)
		require.Equal(t, []EventType{EventSIDRREPReceived}, types(evs))
		require.Equal(t, mad.SIDRUnsupported, evs[0].SIDRStatus)
	})
	t.Run("peer gone", func(t *testing.T) {
		w := newWire(t, Config{MaxCMRetries: 2}, Config{})
		w.down[sideB] = true
		w.do(sideA, func(m *Manager, out *Output) error {
			_, err := m.ResolveSIDR(w.now, SIDRParams{ServiceID: udpSID, RemoteGID: gidB}, out)
			return err
		})
		w.settle()
		evs := w.take(sideA)
		require.Equal(t, []EventType{EventSIDRError}, types(evs))
		require.ErrorIs(t, evs[0].Err, ErrTimeout)
		require.Equal(t, 3, countAttr(w.sent[sideA], mad.AttrSIDRREQ))
		require.Zero(t, w.m[sideA].Len())
	})
}

// TestLAP: RoCE has no alternate paths; a LAP is answered with an APR.
func TestLAP(t *testing.T) {
	w := newWire(t, Config{}, Config{})
	a, b := w.connect()
	for _, tc := range []struct {
		name           string
		local, remote  uint32
		status         mad.APRStatus
		wantUnknownCnt uint64
	}{
		{"established connection", uint32(a), uint32(b), mad.APRUnsupported, 0},
		{"unknown connection", 0x9999, 0x8888, mad.APRInvalidCommID, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lap := mad.New(mad.AttrLAP, 0x55)
			require.NoError(t, mad.LAP(lap.Data()).Encode(&mad.LAPFields{LocalCommID: tc.local, RemoteCommID: tc.remote, RemoteQPN: qpnB}))
			var out Output
			before := w.m[sideB].Counters().UnknownConn
			w.m[sideB].Receive(w.now, w.addr[sideA], lap, &out)
			require.Empty(t, out.Events)
			require.Len(t, out.Datagrams, 1)
			apr := mad.MAD(out.Datagrams[0].MAD)
			require.Equal(t, mad.CMHeader(mad.AttrAPR, 0x55), apr.Header().Fields())
			require.Equal(t, tc.status, mad.APR(apr.Data()).Status())
			require.Equal(t, tc.remote, mad.APR(apr.Data()).LocalCommID())
			require.Equal(t, tc.local, mad.APR(apr.Data()).RemoteCommID())
			require.Equal(t, tc.wantUnknownCnt, w.m[sideB].Counters().UnknownConn-before)
		})
	}
	var out Output
	w.m[sideA].Receive(w.now, w.addr[sideB], mad.New(mad.AttrAPR, 1), &out)
	require.Empty(t, out.Datagrams)
	require.Equal(t, uint64(1), w.m[sideA].Counters().Unexpected)
	require.Equal(t, StateEstablished, w.state(sideB, b))
}

// TestStrayMessages sends messages that belong to no connection, or that
// a connection's state does not accept.
func TestStrayMessages(t *testing.T) {
	w := newWire(t, Config{}, Config{})
	a, b := w.connect()
	from := w.addr[sideA]
	build := func(attr mad.AttrID, enc func(d []byte)) mad.MAD {
		m := mad.New(attr, 0x77)
		enc(m.Data())
		return m
	}
	for _, tc := range []struct {
		name    string
		msg     mad.MAD
		reply   mad.AttrID // 0: none
		counter func(c Counters) uint64
	}{
		{"REP for no connection", build(mad.AttrREP, func(d []byte) {
			_ = mad.REP(d).Encode(&mad.REPFields{LocalCommID: 5, RemoteCommID: 6})
		}), mad.AttrREJ, func(c Counters) uint64 { return c.UnknownConn }},
		{"DREQ for no connection", build(mad.AttrDREQ, func(d []byte) {
			_ = mad.DREQ(d).Encode(&mad.DREQFields{LocalCommID: 5, RemoteCommID: 6})
		}), mad.AttrDREP, func(c Counters) uint64 { return c.UnknownConn }},
		{"RTU for no connection", build(mad.AttrRTU, func(d []byte) {
			_ = mad.RTU(d).Encode(&mad.RTUFields{LocalCommID: 5, RemoteCommID: 6})
		}), 0, func(c Counters) uint64 { return c.UnknownConn }},
		{"REJ for no connection", build(mad.AttrREJ, func(d []byte) {
			_ = mad.REJ(d).Encode(&mad.REJFields{LocalCommID: 5, RemoteCommID: 6, Reason: mad.RejTimeout, ARI: []byte{1, 2, 3, 4, 5, 6, 7, 8}})
		}), 0, func(c Counters) uint64 { return c.UnknownConn }},
		{"MRA for no connection", build(mad.AttrMRA, func(d []byte) {
			_ = mad.MRA(d).Encode(&mad.MRAFields{LocalCommID: 5, RemoteCommID: 6})
		}), 0, func(c Counters) uint64 { return c.UnknownConn }},
		{"DREP while established", build(mad.AttrDREP, func(d []byte) {
			_ = mad.DREP(d).Encode(&mad.DREPFields{LocalCommID: uint32(a), RemoteCommID: uint32(b)})
		}), 0, func(c Counters) uint64 { return c.Unexpected }},
		{"DREQ naming another QP", build(mad.AttrDREQ, func(d []byte) {
			_ = mad.DREQ(d).Encode(&mad.DREQFields{LocalCommID: uint32(a), RemoteCommID: uint32(b), RemoteQPN: qpnB + 1})
		}), 0, func(c Counters) uint64 { return c.Unexpected }},
		{"MRA of a REQ while established", build(mad.AttrMRA, func(d []byte) {
			_ = mad.MRA(d).Encode(&mad.MRAFields{LocalCommID: uint32(a), RemoteCommID: uint32(b)})
		}), 0, func(c Counters) uint64 { return c.Unexpected }},
		{"duplicate RTU", build(mad.AttrRTU, func(d []byte) {
			_ = mad.RTU(d).Encode(&mad.RTUFields{LocalCommID: uint32(a), RemoteCommID: uint32(b)})
		}), 0, func(c Counters) uint64 { return c.Duplicates }},
		{"truncated", mad.MAD(make([]byte, 100)), 0, func(c Counters) uint64 { return c.Malformed }},
		{"SA class", func() mad.MAD { m := mad.New(mad.AttrREQ, 1); m[1] = 0x03; return m }(), 0,
			func(c Counters) uint64 { return c.Malformed }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.counter(w.m[sideB].Counters())
			var out Output
			w.m[sideB].Receive(w.now, from, tc.msg, &out)
			require.Empty(t, out.Events)
			require.Equal(t, before+1, tc.counter(w.m[sideB].Counters()))
			if tc.reply == 0 {
				require.Empty(t, out.Datagrams)
				return
			}
			require.Len(t, out.Datagrams, 1)
			reply := mad.MAD(out.Datagrams[0].MAD)
			require.Equal(t, from, out.Datagrams[0].To)
			require.Equal(t, tc.reply, reply.Header().AttrID())
			require.Equal(t, uint64(0x77), reply.Header().TID(), "the reply echoes the TID")
			// Our "local" ID is the one the message named, the remote the sender's.
			require.Equal(t, uint32(6), mad.RTU(reply.Data()).LocalCommID())
			require.Equal(t, uint32(5), mad.RTU(reply.Data()).RemoteCommID())
		})
	}
	require.Equal(t, StateEstablished, w.state(sideB, b))
	require.Equal(t, StateEstablished, w.state(sideA, a))
}

func TestCommandErrors(t *testing.T) {
	w := newWire(t, Config{}, Config{})
	var out Output
	mA, mB := w.m[sideA], w.m[sideB]
	require.ErrorIs(t, mB.Listen(rpingSID), ErrServiceIDInUse)
	require.ErrorIs(t, mB.Unlisten(1), ErrNoListener)
	require.NoError(t, mB.Unlisten(rpingSID))
	require.NoError(t, mB.Listen(rpingSID))

	bad := []func(p *ConnectParams){
		func(p *ConnectParams) { p.LocalQPN = 1 << 24 },
		func(p *ConnectParams) { p.Path.MTU = 0 },
		func(p *ConnectParams) { p.Transport = mad.TransportRD },
		func(p *ConnectParams) { p.RetryCount = 8 },
		func(p *ConnectParams) { p.RNRRetryCount = 8 },
	}
	for i, mutate := range bad {
		p := rpingParams(t)
		mutate(&p)
		_, err := mA.Connect(w.now, p, &out)
		require.ErrorIs(t, err, ErrInvalidParam, "case %d", i)
	}
	p := rpingParams(t)
	p.PrivateData = make([]byte, mad.REQPrivateDataSize+1)
	_, err := mA.Connect(w.now, p, &out)
	require.ErrorIs(t, err, ErrPrivateDataTooLong)
	require.ErrorIs(t, err, mad.ErrPrivateDataTooLong)
	require.Empty(t, out.Datagrams)
	require.Zero(t, mA.Len())

	for _, f := range []func() error{
		func() error { return mB.Accept(w.now, 42, rpingAccept(), &out) },
		func() error { return mA.SendRTU(w.now, 42, nil, &out) },
		func() error { return mA.Reject(w.now, 42, mad.RejConsumerDefined, nil, nil, &out) },
		func() error { return mA.Disconnect(w.now, 42, nil, &out) },
		func() error { return mA.NotifyEstablished(w.now, 42, &out) },
		func() error { return mB.ReplySIDR(w.now, 42, SIDRReply{}, &out) },
	} {
		require.ErrorIs(t, f(), ErrUnknownConn)
	}

	a, b := w.connect()
	require.ErrorIs(t, mB.Accept(w.now, b, rpingAccept(), &out), ErrState)
	require.ErrorIs(t, mA.SendRTU(w.now, a, nil, &out), ErrState)
	require.ErrorIs(t, mA.Reject(w.now, a, mad.RejConsumerDefined, nil, nil, &out), ErrState)
	require.ErrorIs(t, mB.ReplySIDR(w.now, b, SIDRReply{}, &out), ErrUnknownConn, "not a SIDR request")
	require.ErrorIs(t, mA.Disconnect(w.now, a, make([]byte, mad.DREQPrivateDataSize+1), &out), ErrPrivateDataTooLong)
	require.Equal(t, StateEstablished, w.state(sideA, a))
	require.ErrorIs(t, mA.Disconnect(w.now, a, nil, &out), nil)
	require.ErrorIs(t, mA.Disconnect(w.now, a, nil, &out), ErrState)

	require.Equal(t, "Established", StateEstablished.String())
	require.Equal(t, "State(99)", State(99).String())
	require.Equal(t, "REQReceived", EventREQReceived.String())
	require.Equal(t, "EventType(0)", EventType(0).String())
	require.EqualError(t, &RejectError{Reason: mad.RejStaleConn}, "cm: connection rejected: stale connection")
}
