package cm

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cm/mad"
)

// TestLoopback connects a manager to itself, as rping -s and rping -c on
// one gorxe device do: both halves of the connection live in one manager
// and every MAD comes back to it.
func TestLoopback(t *testing.T) {
	m := New(Config{CAGUID: guidA})
	require.NoError(t, m.Listen(rpingSID))
	self := Addr{GID: gidA, QPN: QP1}
	var events []Event
	var pump func(out *Output)
	pump = func(out *Output) {
		events = append(events, out.Events...)
		for _, d := range out.Datagrams {
			require.Equal(t, self, d.To)
			var next Output
			m.Receive(t0, self, d.MAD, &next)
			pump(&next)
		}
	}
	run := func(f func(out *Output) error) {
		var out Output
		require.NoError(t, f(&out))
		pump(&out)
	}
	p := rpingParams(t)
	p.Path.RemoteGID = gidA
	var a ConnID
	run(func(out *Output) (err error) { a, err = m.Connect(t0, p, out); return err })
	require.Equal(t, []EventType{EventREQReceived}, types(events))
	b := events[0].Conn
	require.NotEqual(t, a, b)
	run(func(out *Output) error { return m.Accept(t0, b, rpingAccept(), out) })
	run(func(out *Output) error { return m.SendRTU(t0, a, nil, out) })
	run(func(out *Output) error { return m.Disconnect(t0, a, nil, out) })
	run(func(out *Output) error { return m.Disconnect(t0, b, nil, out) })
	require.Equal(t, []EventType{EventREQReceived, EventREPReceived, EventEstablished, EventEstablished,
		EventDREQReceived, EventDisconnected}, types(events))
	ia, _ := m.Conn(a)
	ib, _ := m.Conn(b)
	require.Equal(t, StateTimewait, ia.State)
	require.Equal(t, StateTimewait, ib.State)
	require.Equal(t, ia.Attrs.SQPSN, ib.Attrs.RQPSN)
	require.Equal(t, ib.Attrs.SQPSN, ia.Attrs.RQPSN)
	require.Equal(t, uint32(qpnB), ia.Attrs.RemoteQPN)
	require.Equal(t, uint32(qpnA), ib.Attrs.RemoteQPN)
	checkIndexes(t, m)
	var out Output
	m.Tick(m.Deadline(), &out)
	m.Tick(m.Deadline(), &out)
	require.Zero(t, m.Len())
	require.Zero(t, m.Counters().Unexpected+m.Counters().UnknownConn+m.Counters().Malformed)
}

// TestForgedREJ: a REJ must name both communication IDs of a connection
// (once the peer's is known) to affect it.
func TestForgedREJ(t *testing.T) {
	w := newWire(t, Config{}, Config{})
	a, b := w.connect()
	rej := mad.New(mad.AttrREJ, 1)
	require.NoError(t, mad.REJ(rej.Data()).Encode(&mad.REJFields{LocalCommID: uint32(b) + 1, RemoteCommID: uint32(a),
		Reason: mad.RejConsumerDefined}))
	var out Output
	w.m[sideA].Receive(w.now, w.addr[sideB], rej, &out)
	require.Empty(t, out.Events)
	require.Equal(t, StateEstablished, w.state(sideA, a))
	require.Equal(t, uint64(1), w.m[sideA].Counters().UnknownConn)

	// An oversized ARI length is clamped to the 72-byte area.
	require.NoError(t, mad.REJ(rej.Data()).Encode(&mad.REJFields{LocalCommID: uint32(b), RemoteCommID: uint32(a),
		Reason: mad.RejConsumerDefined}))
	rej.Data()[9] = 0xfe
	w.m[sideA].Receive(w.now, w.addr[sideB], rej, &out)
	require.Equal(t, []EventType{EventRejected}, types(out.Events))
	require.Len(t, out.Events[0].ARI, mad.REJARISize)
	require.Equal(t, StateTimewait, w.state(sideA, a))

	out.Reset()
	require.Empty(t, out.Events)
	require.Empty(t, out.Datagrams)
}
