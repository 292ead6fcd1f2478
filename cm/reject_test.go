package cm

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cm/mad"
)

// rawREQ builds a REQ as a foreign peer would send it.
func rawREQ(tid uint64, f mad.REQFields) mad.MAD {
	m := mad.New(mad.AttrREQ, tid)
	if err := mad.REQ(m.Data()).Encode(&f); err != nil {
		panic(err)
	}
	return m
}

func goodREQ() mad.REQFields {
	return mad.REQFields{
		LocalCommID: 0x1234, ServiceID: rpingSID, LocalCAGUID: guidA, LocalQPN: 0x77,
		TransportType: mad.TransportRC, PathMTU: mad.MTU1024, MaxCMRetries: 15,
		LocalCMResponseTimeout: 20, RemoteCMResponseTimeout: 20, PKey: 0xffff,
	}
}

// TestREQRejections feeds B requests it must refuse and checks the REJ it
// answers with: reason, message rejected, IDs and echoed TID.
func TestREQRejections(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(f *mad.REQFields)
		reason mad.RejectReason
	}{
		{"no listener", func(f *mad.REQFields) { f.ServiceID = mad.ServiceID(mad.PortSpaceTCP, 1) }, mad.RejInvalidServiceID},
		{"RD transport", func(f *mad.REQFields) { f.TransportType = mad.TransportRD }, mad.RejInvalidTransportType},
		{"reserved transport", func(f *mad.REQFields) { f.TransportType = 3 }, mad.RejInvalidTransportType},
		{"MTU 0", func(f *mad.REQFields) { f.PathMTU = 0 }, mad.RejInvalidMTU},
		{"MTU 6", func(f *mad.REQFields) { f.PathMTU = 6 }, mad.RejInvalidMTU},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(Config{CAGUID: guidB})
			require.NoError(t, m.Listen(rpingSID))
			f := goodREQ()
			tc.mutate(&f)
			var out Output
			from := Addr{GID: gidA, QPN: QP1}
			m.Receive(t0, from, rawREQ(0xabcdef, f), &out)
			require.Empty(t, out.Events)
			require.Len(t, out.Datagrams, 1)
			require.Equal(t, from, out.Datagrams[0].To)
			rej := mad.MAD(out.Datagrams[0].MAD)
			require.Equal(t, mad.CMHeader(mad.AttrREJ, 0xabcdef), rej.Header().Fields())
			require.Equal(t, mad.REJFields{
				RemoteCommID: 0x1234, MsgRejected: mad.MsgTypeREQ, Reason: tc.reason,
				ARI: []byte{}, PrivateData: make([]byte, mad.REJPrivateDataSize),
			}, mad.REJ(rej.Data()).Fields())
			require.Zero(t, m.Len())
		})
	}
}

// TestRejectedConnections runs connections that end in a REJ and checks
// what each side is told and what it keeps.
func TestRejectedConnections(t *testing.T) {
	t.Run("no listener", func(t *testing.T) {
		w := newWire(t, Config{}, Config{})
		p := rpingParams(t)
		p.ServiceID = mad.ServiceID(mad.PortSpaceTCP, 9999)
		w.do(sideA, func(m *Manager, out *Output) error { _, err := m.Connect(w.now, p, out); return err })
		evs := w.take(sideA)
		require.Equal(t, []EventType{EventRejected}, types(evs))
		require.ErrorIs(t, evs[0].Err, ErrRejected)
		require.ErrorIs(t, evs[0].Err, &RejectError{Reason: mad.RejInvalidServiceID})
		require.NotErrorIs(t, evs[0].Err, &RejectError{Reason: mad.RejConsumerDefined})
		require.Equal(t, StateIdle, evs[0].State)
		require.Zero(t, w.m[sideA].Len())
		require.Equal(t, uint64(1), w.m[sideB].Counters().NoListener)
		require.True(t, w.m[sideA].Deadline().IsZero())
	})
	t.Run("consumer rejects the REQ", func(t *testing.T) {
		w := newWire(t, Config{}, Config{})
		w.do(sideA, func(m *Manager, out *Output) error { _, err := m.Connect(w.now, rpingParams(t), out); return err })
		b := w.take(sideB)[0].Conn
		w.do(sideB, func(m *Manager, out *Output) error {
			return m.Reject(w.now, b, mad.RejConsumerDefined, nil, []byte("busy"), out)
		})
		evs := w.take(sideA)
		require.Equal(t, []EventType{EventRejected}, types(evs))
		require.ErrorIs(t, evs[0].Err, &RejectError{Reason: mad.RejConsumerDefined})
		require.Equal(t, "busy", string(evs[0].PrivateData[:4]))
		require.Len(t, evs[0].PrivateData, mad.REJPrivateDataSize)
		require.Equal(t, mad.MsgTypeREQ, mad.REJ(w.sent[sideB][0].Data()).MsgRejected())
		require.Zero(t, w.m[sideA].Len())
		require.Zero(t, w.m[sideB].Len())
	})
	t.Run("consumer rejects the REP", func(t *testing.T) {
		w := newWire(t, Config{}, Config{})
		var a ConnID
		w.do(sideA, func(m *Manager, out *Output) (err error) { a, err = m.Connect(w.now, rpingParams(t), out); return err })
		b := w.take(sideB)[0].Conn
		w.do(sideB, func(m *Manager, out *Output) error { return m.Accept(w.now, b, rpingAccept(), out) })
		w.do(sideA, func(m *Manager, out *Output) error {
			return m.Reject(w.now, a, mad.RejInsufficientRespResources, []byte{1}, nil, out)
		})
		require.Equal(t, mad.MsgTypeREP, mad.REJ(w.sent[sideA][1].Data()).MsgRejected())
		evs := w.take(sideB)
		require.Equal(t, []EventType{EventRejected}, types(evs))
		require.Equal(t, []byte{1}, evs[0].ARI)
		require.Equal(t, StateTimewait, w.state(sideA, a), "the rejecting active side had a QP ready")
		require.Zero(t, w.m[sideB].Len())
	})
	t.Run("stale connection", func(t *testing.T) {
		// A reconnects from the same QP while B still holds the old
		// connection in timewait.
		w := newWire(t, Config{}, Config{})
		a, b := w.connect()
		w.do(sideA, func(m *Manager, out *Output) error { return m.Disconnect(w.now, a, nil, out) })
		w.do(sideB, func(m *Manager, out *Output) error { return m.Disconnect(w.now, b, nil, out) })
		w.take(sideA)
		w.take(sideB)
		var a2 ConnID
		w.do(sideA, func(m *Manager, out *Output) (err error) { a2, err = m.Connect(w.now, rpingParams(t), out); return err })
		evs := w.take(sideA)
		require.Equal(t, []EventType{EventRejected}, types(evs))
		require.ErrorIs(t, evs[0].Err, &RejectError{Reason: mad.RejStaleConn})
		require.Equal(t, StateTimewait, w.state(sideA, a2), "a stale-connection REJ sends the requester to timewait")
		require.Empty(t, w.take(sideB))
		// Once B's timewait is over, the same QP may connect again.
		w.settle()
		w.take(sideA)
		w.take(sideB)
		w.connect()
	})
	t.Run("duplicate REQ after timewait began", func(t *testing.T) {
		w := newWire(t, Config{}, Config{})
		a, b := w.connect()
		w.do(sideA, func(m *Manager, out *Output) error { return m.Disconnect(w.now, a, nil, out) })
		w.do(sideB, func(m *Manager, out *Output) error { return m.Disconnect(w.now, b, nil, out) })
		var out Output
		w.m[sideB].Receive(w.now, w.addr[sideA], w.sent[sideA][0], &out) // the old REQ, very late
		require.Len(t, out.Datagrams, 1)
		require.Equal(t, mad.RejStaleConn, mad.REJ(mad.MAD(out.Datagrams[0].MAD).Data()).Reason())
	})
	t.Run("too many connections", func(t *testing.T) {
		m := New(Config{CAGUID: guidB, MaxConns: 1})
		require.NoError(t, m.Listen(rpingSID))
		var out Output
		m.Receive(t0, Addr{GID: gidA, QPN: QP1}, rawREQ(1, goodREQ()), &out)
		require.Equal(t, []EventType{EventREQReceived}, types(out.Events))
		f := goodREQ()
		f.LocalCommID, f.LocalQPN = 0x5678, 0x78
		out.Reset()
		m.Receive(t0, Addr{GID: gidA, QPN: QP1}, rawREQ(2, f), &out)
		require.Empty(t, out.Events)
		require.Equal(t, mad.RejNoResources, mad.REJ(mad.MAD(out.Datagrams[0].MAD).Data()).Reason())
		_, err := m.Connect(t0, rpingParams(t), &out)
		require.ErrorIs(t, err, ErrTooManyConns)
	})
}

// TestDestroy checks what Destroy tells the peer in each state.
func TestDestroy(t *testing.T) {
	t.Run("waiting for the REP", func(t *testing.T) {
		w := newWire(t, Config{}, Config{})
		var a ConnID
		w.do(sideA, func(m *Manager, out *Output) (err error) { a, err = m.Connect(w.now, rpingParams(t), out); return err })
		w.do(sideA, func(m *Manager, out *Output) error { return m.Destroy(w.now, a, out) })
		require.Equal(t, mad.RejTimeout, mad.REJ(w.sent[sideA][1].Data()).Reason())
		require.Equal(t, []EventType{EventREQReceived, EventRejected}, types(w.take(sideB)))
		require.Zero(t, w.m[sideA].Len())
		require.Zero(t, w.m[sideB].Len())
	})
	t.Run("established", func(t *testing.T) {
		w := newWire(t, Config{}, Config{})
		a, b := w.connect()
		w.do(sideA, func(m *Manager, out *Output) error { return m.Destroy(w.now, a, out) })
		require.Equal(t, StateTimewait, w.state(sideA, a))
		require.Equal(t, []EventType{EventDREQReceived}, types(w.take(sideB)))
		w.do(sideB, func(m *Manager, out *Output) error { return m.Destroy(w.now, b, out) })
		require.Equal(t, StateTimewait, w.state(sideB, b))
		require.Equal(t, mad.AttrDREP, w.sent[sideB][len(w.sent[sideB])-1].Header().AttrID())
		w.settle()
		require.Equal(t, 1, countAttr(w.sent[sideA], mad.AttrDREQ), "no retransmission after Destroy")
		require.Zero(t, w.m[sideA].Len())
		require.Zero(t, w.m[sideB].Len())
	})
	t.Run("unknown", func(t *testing.T) {
		require.ErrorIs(t, New(Config{}).Destroy(t0, 1, &Output{}), ErrUnknownConn)
	})
}

// TestDestroyTable: what Destroy sends, and what it leaves, in each state.
func TestDestroyTable(t *testing.T) {
	for _, tc := range []struct {
		state  State
		sends  mad.AttrID // 0: nothing
		reason mad.RejectReason
		after  State
	}{
		{StateREQSent, mad.AttrREJ, mad.RejTimeout, StateIdle},
		{StateREQRcvd, mad.AttrREJ, mad.RejConsumerDefined, StateIdle},
		{StateREPSent, mad.AttrREJ, mad.RejConsumerDefined, StateIdle},
		{StateREPRcvd, mad.AttrREJ, mad.RejConsumerDefined, StateTimewait},
		{StateEstablished, mad.AttrDREQ, 0, StateTimewait},
		{StateDREQSent, 0, 0, StateTimewait},
		{StateDREQRcvd, mad.AttrDREP, 0, StateTimewait},
		{StateTimewait, 0, 0, StateTimewait},
	} {
		t.Run(tc.state.String(), func(t *testing.T) {
			w, side, id, _ := inState(t, tc.state)
			var out Output
			require.NoError(t, w.m[side].Destroy(w.now, id, &out))
			require.Equal(t, tc.after, w.state(side, id))
			require.Empty(t, out.Events)
			if tc.sends == 0 {
				require.Empty(t, out.Datagrams)
			} else {
				require.Len(t, out.Datagrams, 1)
				msg := mad.MAD(out.Datagrams[0].MAD)
				require.Equal(t, tc.sends, msg.Header().AttrID())
				if tc.sends == mad.AttrREJ {
					require.Equal(t, tc.reason, mad.REJ(msg.Data()).Reason())
				}
			}
			if tc.after == StateTimewait {
				require.True(t, w.m[side].Deadline().After(w.now))
				require.Nil(t, w.m[side].conns[uint32(id)].pending, "nothing is retransmitted after Destroy")
			}
		})
	}
	t.Run("SIDR request", func(t *testing.T) {
		m := New(Config{})
		var out Output
		id, err := m.ResolveSIDR(t0, SIDRParams{ServiceID: 1, RemoteGID: gidB}, &out)
		require.NoError(t, err)
		require.NoError(t, m.Destroy(t0, id, &out))
		require.Zero(t, m.Len())
	})
}
