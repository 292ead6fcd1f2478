package cm

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cm/mad"
)

// TestDropREQ: a REQ the passive consumer drops is answered with nothing and leaves nothing
// behind, so the active side's retransmission of the same REQ (same TID, same communication ID)
// is a new request, not a duplicate to answer with an MRA, and the connection then completes.
func TestDropREQ(t *testing.T) {
	w := newWire(t, Config{}, Config{})
	var a ConnID
	w.do(sideA, func(m *Manager, out *Output) (err error) { a, err = m.Connect(w.now, rpingParams(t), out); return err })
	first := w.take(sideB)
	require.Equal(t, []EventType{EventREQReceived}, types(first))
	b1 := first[0].Conn

	w.do(sideB, func(m *Manager, out *Output) error { return m.DropREQ(b1) })
	mB := w.m[sideB]
	require.Empty(t, w.sent[sideB], "a dropped REQ is not answered")
	require.Empty(t, w.take(sideB))
	require.Zero(t, mB.Len())
	_, known := mB.Conn(b1)
	require.False(t, known)
	require.True(t, mB.Deadline().IsZero())
	require.Empty(t, mB.byRemote)
	require.Empty(t, mB.byQPN)
	require.Equal(t, StateREQSent, w.state(sideA, a), "the active side only hears silence")

	require.True(t, w.advance()) // A's REQ timer fires: it retransmits
	require.Equal(t, []mad.AttrID{mad.AttrREQ, mad.AttrREQ}, attrsOf(w.sent[sideA]))
	require.Equal(t, w.sent[sideA][0], w.sent[sideA][1], "the retransmission is the same REQ")
	again := w.take(sideB)
	require.Equal(t, []EventType{EventREQReceived}, types(again), "the retransmission is a new request")
	b2 := again[0].Conn
	require.NotEqual(t, b1, b2)
	require.Equal(t, StateREQRcvd, again[0].State)
	require.Equal(t, first[0].ServiceID, again[0].ServiceID)
	require.Equal(t, first[0].Peer, again[0].Peer)
	require.Equal(t, first[0].PrivateData, again[0].PrivateData)
	require.Equal(t, first[0].Attrs.RemoteQPN, again[0].Attrs.RemoteQPN)
	require.Empty(t, w.sent[sideB], "no MRA: B does not know the REQ")

	c := mB.Counters()
	require.Equal(t, uint64(1), c.BacklogFull)
	require.Zero(t, c.Duplicates)
	require.Zero(t, c.Rejected)
	require.Equal(t, uint64(2), c.Message(mad.AttrREQ).Received)

	w.do(sideB, func(m *Manager, out *Output) error { return m.Accept(w.now, b2, rpingAccept(), out) })
	require.Equal(t, []EventType{EventREPReceived}, types(w.take(sideA)))
	w.do(sideA, func(m *Manager, out *Output) error { return m.SendRTU(w.now, a, nil, out) })
	require.Equal(t, StateEstablished, w.state(sideA, a))
	require.Equal(t, StateEstablished, w.state(sideB, b2))
	require.Equal(t, []mad.AttrID{mad.AttrREP}, attrsOf(w.sent[sideB]))
}

// TestDropREQUntilTimeout: a passive side that drops every copy of a REQ never answers, and the
// active side gives up after its retries as it does for a silent peer; its REJ "timeout" finds
// nothing on the passive side.
func TestDropREQUntilTimeout(t *testing.T) {
	w := newWire(t, Config{}, Config{})
	var a ConnID
	w.do(sideA, func(m *Manager, out *Output) (err error) { a, err = m.Connect(w.now, rpingParams(t), out); return err })
	for i := 0; ; i++ {
		require.Less(t, i, 100, "the active side never gives up")
		for _, e := range w.take(sideB) {
			require.Equal(t, EventREQReceived, e.Type)
			w.do(sideB, func(m *Manager, out *Output) error { return m.DropREQ(e.Conn) })
		}
		if !w.advance() {
			break
		}
	}
	evs := w.take(sideA)
	require.Equal(t, []EventType{EventUnreachable}, types(evs))
	require.ErrorIs(t, evs[0].Err, ErrTimeout)
	require.Equal(t, StateIdle, w.state(sideA, a))
	require.Empty(t, w.sent[sideB])
	require.Zero(t, w.m[sideB].Len())
	c := w.m[sideB].Counters()
	require.Equal(t, uint64(1+DefaultMaxCMRetries), c.BacklogFull, "every copy was dropped")
	require.Equal(t, uint64(1), c.UnknownConn, "the REJ timeout")
	require.Zero(t, c.Duplicates)
}

// TestDropREQErrors: only a request the consumer was just given can be dropped.
func TestDropREQErrors(t *testing.T) {
	for _, s := range []State{StateREQSent, StateREPSent, StateREPRcvd, StateEstablished, StateTimewait} {
		t.Run(s.String(), func(t *testing.T) {
			w, side, id, _ := inState(t, s)
			require.ErrorIs(t, w.m[side].DropREQ(id), ErrState)
			require.Equal(t, s, w.state(side, id))
			require.Zero(t, w.m[side].Counters().BacklogFull)
		})
	}
	t.Run("MRAREQSent", func(t *testing.T) {
		w, _, b, _ := inState(t, StateREQRcvd)
		require.True(t, w.advance()) // a duplicate REQ: B has sent an MRA, the peer waits
		require.Equal(t, StateMRAREQSent, w.state(sideB, b))
		require.ErrorIs(t, w.m[sideB].DropREQ(b), ErrState)
	})
	t.Run("unknown", func(t *testing.T) {
		require.ErrorIs(t, New(Config{}).DropREQ(42), ErrUnknownConn)
	})
	t.Run("SIDR request", func(t *testing.T) {
		w := newWire(t, Config{}, Config{})
		w.do(sideA, func(m *Manager, out *Output) error {
			_, err := m.ResolveSIDR(w.now, SIDRParams{ServiceID: rpingSID, RemoteGID: gidB}, out)
			return err
		})
		evs := w.take(sideB)
		require.Equal(t, []EventType{EventSIDRREQReceived}, types(evs))
		require.ErrorIs(t, w.m[sideB].DropREQ(evs[0].Conn), ErrUnknownConn)
	})
}
