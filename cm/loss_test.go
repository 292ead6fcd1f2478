package cm

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cm/mad"
)

// dropFirst loses the first n MADs of attribute attr sent by side from.
func dropFirst(from int, attr mad.AttrID, n int) func(int, mad.MAD) bool {
	return func(f int, m mad.MAD) bool {
		if f == from && m.Header().AttrID() == attr && n > 0 {
			n--
			return true
		}
		return false
	}
}

// TestLostMADs loses one kind of MAD a few times during a connection's life
// and checks that retransmission and duplicate answers recover it, with
// each side seeing each event exactly once.
func TestLostMADs(t *testing.T) {
	for _, tc := range []struct {
		name string
		from int
		attr mad.AttrID
		n    int
		// retransmits per side once the connection is established and torn down
		retransA, retransB uint64
		// retransmits of the lost message by its sender: only REQ, REP and DREQ wait for an
		// answer; a lost RTU or DREP is sent again as the answer to a retransmission
		lostRetrans uint64
	}{
		{"REQ lost twice", sideA, mad.AttrREQ, 2, 2, 0, 2},
		// Both time out together: A retransmits the REQ, which B, in REPSent,
		// answers with its stored REP, and B retransmits the REP.
		{"REP lost", sideB, mad.AttrREP, 1, 1, 1, 1},
		// B retransmits the REP; A, established, answers with its stored RTU.
		{"RTU lost", sideA, mad.AttrRTU, 1, 0, 1, 0},
		// A retransmits the DREQ; B, in timewait, answers with a DREP.
		{"DREP lost", sideB, mad.AttrDREP, 1, 1, 0, 0},
		{"DREQ lost three times", sideA, mad.AttrDREQ, 3, 3, 0, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWire(t, Config{}, Config{})
			w.drop = dropFirst(tc.from, tc.attr, tc.n)
			var a, b ConnID
			w.do(sideA, func(m *Manager, out *Output) (err error) {
				a, err = m.Connect(w.now, rpingParams(t), out)
				return err
			})
			for len(w.events[sideB]) == 0 {
				require.True(t, w.advance())
			}
			evs := w.take(sideB)
			require.Equal(t, []EventType{EventREQReceived}, types(evs))
			b = evs[0].Conn
			w.do(sideB, func(m *Manager, out *Output) error { return m.Accept(w.now, b, rpingAccept(), out) })
			for len(w.events[sideA]) == 0 {
				require.True(t, w.advance())
			}
			require.Equal(t, []EventType{EventREPReceived}, types(w.take(sideA)))
			w.do(sideA, func(m *Manager, out *Output) error { return m.SendRTU(w.now, a, nil, out) })
			for w.state(sideB, b) != StateEstablished {
				require.True(t, w.advance())
			}
			// When both retransmission timers fire together, the second REP
			// meets an active side that has the first: it answers with an
			// MRA, which B reports.
			require.Equal(t, []EventType{EventEstablished}, types(withoutMRA(w.take(sideA))))
			require.Equal(t, []EventType{EventEstablished}, types(withoutMRA(w.take(sideB))))

			w.do(sideA, func(m *Manager, out *Output) error { return m.Disconnect(w.now, a, nil, out) })
			for len(w.events[sideB]) == 0 {
				require.True(t, w.advance())
			}
			require.Equal(t, []EventType{EventDREQReceived}, types(w.take(sideB)))
			w.do(sideB, func(m *Manager, out *Output) error { return m.Disconnect(w.now, b, nil, out) })
			for w.state(sideA, a) != StateTimewait {
				require.True(t, w.advance())
			}
			require.Equal(t, []EventType{EventDisconnected}, types(w.take(sideA)))
			w.settle()
			require.Equal(t, []EventType{EventTimewaitExit}, types(w.take(sideA)))
			require.Equal(t, []EventType{EventTimewaitExit}, types(w.take(sideB)))
			require.Equal(t, tc.retransA, w.m[sideA].Counters().Retransmits)
			require.Equal(t, tc.retransB, w.m[sideB].Counters().Retransmits)
			lost := w.m[tc.from].Counters()
			require.Equal(t, tc.lostRetrans, lost.Message(tc.attr).Retransmits)
			require.Greater(t, lost.Message(tc.attr).Sent, uint64(tc.n), "the lost copies and the one that arrived")
			for _, side := range []int{sideA, sideB} {
				c := w.m[side].Counters()
				var sent, rcvd, retrans uint64
				for _, mc := range c.PerMessage {
					sent, rcvd, retrans = sent+mc.Sent, rcvd+mc.Received, retrans+mc.Retransmits
				}
				require.Equal(t, []uint64{c.Sent, c.Received - c.Malformed, c.Retransmits}, []uint64{sent, rcvd, retrans},
					"side %d: the messages' counters add up to the totals", side)
			}
			require.Zero(t, w.m[sideA].Len())
			require.Zero(t, w.m[sideB].Len())
		})
	}
}

// TestRetransmissionsAreVerbatim checks that a retransmitted REQ is the
// same datagram (the capture shows kernel rxe's five REQ retransmissions as
// identical bytes) and that the retry interval is the response timeout.
func TestRetransmissionsAreVerbatim(t *testing.T) {
	w := newWire(t, Config{}, Config{})
	w.down[sideB] = true
	w.do(sideA, func(m *Manager, out *Output) error {
		_, err := m.Connect(w.now, rpingParams(t), out)
		return err
	})
	interval := 2*mad.Timeout(DefaultPacketLifeTime) + mad.Timeout(DefaultCMResponseTimeout)
	for i := 1; i <= 3; i++ {
		require.True(t, w.advance())
		require.Equal(t, t0.Add(time.Duration(i)*interval), w.now)
	}
	require.Len(t, w.sent[sideA], 4)
	for _, m := range w.sent[sideA][1:] {
		require.Equal(t, []byte(w.sent[sideA][0]), []byte(m))
	}
}

// TestPeerDisappears: a side that stops answering mid-handshake is given
// MaxCMRetries retransmissions, then the other side reports it unreachable,
// sends a REJ "timeout" carrying its CA GUID, and forgets the connection.
func TestPeerDisappears(t *testing.T) {
	t.Run("passive side gone before the REP", func(t *testing.T) {
		w := newWire(t, Config{MaxCMRetries: 3}, Config{})
		w.down[sideB] = true
		var a ConnID
		w.do(sideA, func(m *Manager, out *Output) (err error) {
			a, err = m.Connect(w.now, rpingParams(t), out)
			return err
		})
		w.settle()
		evs := w.take(sideA)
		require.Equal(t, []EventType{EventUnreachable}, types(evs))
		require.ErrorIs(t, evs[0].Err, ErrTimeout)
		require.Equal(t, a, evs[0].Conn)
		require.Equal(t, []mad.AttrID{mad.AttrREQ, mad.AttrREQ, mad.AttrREQ, mad.AttrREQ, mad.AttrREJ}, attrsOf(w.sent[sideA]))
		rej := mad.REJ(w.sent[sideA][4].Data())
		require.Equal(t, mad.RejTimeout, rej.Reason())
		require.Equal(t, uint32(a), rej.LocalCommID())
		require.Equal(t, guidBytes(guidA), rej.ARI())
		require.Zero(t, w.m[sideA].Len())
		require.Equal(t, uint64(1), w.m[sideA].Counters().Timeouts)
	})
	t.Run("active side gone after the REQ", func(t *testing.T) {
		w := newWire(t, Config{MaxCMRetries: 2}, Config{})
		w.do(sideA, func(m *Manager, out *Output) error {
			_, err := m.Connect(w.now, rpingParams(t), out)
			return err
		})
		b := w.take(sideB)[0].Conn
		w.down[sideA] = true
		w.do(sideB, func(m *Manager, out *Output) error { return m.Accept(w.now, b, rpingAccept(), out) })
		w.settle()
		evs := w.take(sideB)
		require.Equal(t, []EventType{EventUnreachable}, types(evs))
		require.ErrorIs(t, evs[0].Err, ErrTimeout)
		// The REQ's Max CM Retries (2) bounds the REP's retransmissions.
		require.Equal(t, []mad.AttrID{mad.AttrREP, mad.AttrREP, mad.AttrREP, mad.AttrREJ}, attrsOf(w.sent[sideB]))
		require.Equal(t, mad.MsgTypeOther, mad.REJ(w.sent[sideB][3].Data()).MsgRejected())
		require.Zero(t, w.m[sideB].Len())
	})
	t.Run("the peer learns of the give-up by GUID", func(t *testing.T) {
		// A loses every REP, so it never learns B's communication ID; its
		// REJ "timeout" still reaches B's connection through A's GUID.
		w := newWire(t, Config{MaxCMRetries: 1}, Config{})
		w.drop = func(from int, m mad.MAD) bool { return from == sideB && m.Header().AttrID() == mad.AttrREP }
		w.do(sideA, func(m *Manager, out *Output) error {
			_, err := m.Connect(w.now, rpingParams(t), out)
			return err
		})
		b := w.take(sideB)[0].Conn
		w.do(sideB, func(m *Manager, out *Output) error { return m.Accept(w.now, b, rpingAccept(), out) })
		for len(w.events[sideA]) == 0 {
			require.True(t, w.advance())
		}
		require.Equal(t, []EventType{EventUnreachable}, types(w.take(sideA)))
		evs := w.take(sideB)
		require.Equal(t, []EventType{EventRejected}, types(evs))
		require.ErrorIs(t, evs[0].Err, &RejectError{Reason: mad.RejTimeout})
		require.Zero(t, w.m[sideB].Len())
	})
	t.Run("DREQ never answered", func(t *testing.T) {
		w := newWire(t, Config{MaxCMRetries: 2}, Config{})
		a, _ := w.connect()
		w.down[sideB] = true
		w.do(sideA, func(m *Manager, out *Output) error { return m.Disconnect(w.now, a, nil, out) })
		for w.state(sideA, a) != StateTimewait {
			require.True(t, w.advance())
		}
		evs := w.take(sideA)
		require.Equal(t, []EventType{EventDisconnected}, types(evs))
		require.ErrorIs(t, evs[0].Err, ErrTimeout)
		require.Equal(t, 3, countAttr(w.sent[sideA], mad.AttrDREQ))
	})
}

func withoutMRA(evs []Event) []Event {
	var out []Event
	for _, e := range evs {
		if e.Type != EventMRAReceived {
			out = append(out, e)
		}
	}
	return out
}

func countAttr(msgs []mad.MAD, a mad.AttrID) int {
	n := 0
	for _, m := range msgs {
		if m.Header().AttrID() == a {
			n++
		}
	}
	return n
}

// TestSlowConsumersSendMRA: a duplicate REQ while the passive consumer has
// not accepted, or a duplicate REP while the active consumer has not sent
// its RTU, is answered with an MRA, which moves the peer to a longer wait.
func TestSlowConsumersSendMRA(t *testing.T) {
	w := newWire(t, Config{}, Config{})
	var a ConnID
	w.do(sideA, func(m *Manager, out *Output) (err error) {
		a, err = m.Connect(w.now, rpingParams(t), out)
		return err
	})
	b := w.take(sideB)[0].Conn
	require.True(t, w.advance()) // A retransmits the REQ; B has not decided
	require.Equal(t, []mad.AttrID{mad.AttrMRA}, attrsOf(w.sent[sideB]))
	mra := mad.MRA(w.sent[sideB][0].Data())
	require.Equal(t, mad.MsgTypeREQ, mra.MsgMRAed())
	require.Equal(t, uint8(DefaultMRAServiceTimeout), mra.ServiceTimeout())
	require.Equal(t, StateMRAREQSent, w.state(sideB, b))
	require.Equal(t, StateMRAREQRcvd, w.state(sideA, a))
	evs := w.take(sideA)
	require.Equal(t, []EventType{EventMRAReceived}, types(evs))
	require.Equal(t, uint8(DefaultMRAServiceTimeout), evs[0].ServiceTimeout)
	require.Equal(t, w.now.Add(2*mad.Timeout(DefaultPacketLifeTime)+mad.Timeout(DefaultMRAServiceTimeout)), w.m[sideA].Deadline())
	require.Empty(t, w.take(sideB), "the duplicate REQ is not a new connection")

	w.do(sideB, func(m *Manager, out *Output) error { return m.Accept(w.now, b, rpingAccept(), out) })
	require.Equal(t, []EventType{EventREPReceived}, types(w.take(sideA)))
	// B's REP timer fires before A sends its RTU: A asks for patience.
	require.True(t, w.advance())
	require.Equal(t, StateMRAREPSent, w.state(sideA, a))
	require.Equal(t, StateMRAREPRcvd, w.state(sideB, b))
	require.Equal(t, mad.MsgTypeREP, mad.MRA(w.sent[sideA][len(w.sent[sideA])-1].Data()).MsgMRAed())
	w.do(sideA, func(m *Manager, out *Output) error { return m.SendRTU(w.now, a, nil, out) })
	require.Equal(t, StateEstablished, w.state(sideB, b))
	require.Equal(t, uint64(2), w.m[sideA].Counters().Duplicates+w.m[sideB].Counters().Duplicates)
}

// TestSimultaneousDisconnect: both sides send a DREQ at once. Each DREQ
// answers the other: both reply with a DREP, report Disconnected, and the
// crossing DREPs are harmless duplicates.
func TestSimultaneousDisconnect(t *testing.T) {
	w := newWire(t, Config{}, Config{})
	a, b := w.connect()
	var outA, outB Output
	require.NoError(t, w.m[sideA].Disconnect(w.now, a, nil, &outA))
	require.NoError(t, w.m[sideB].Disconnect(w.now, b, nil, &outB))
	w.flush(sideA, &outA)
	w.flush(sideB, &outB)
	require.Equal(t, []EventType{EventDisconnected}, types(w.take(sideA)))
	require.Equal(t, []EventType{EventDisconnected}, types(w.take(sideB)))
	require.Equal(t, StateTimewait, w.state(sideA, a))
	require.Equal(t, StateTimewait, w.state(sideB, b))
	// A's DREQ reached B (already in DREQSent) before B's own DREQ was
	// delivered, so B's DREP is recorded first.
	require.Equal(t, []mad.AttrID{mad.AttrREQ, mad.AttrRTU, mad.AttrDREQ, mad.AttrDREP}, attrsOf(w.sent[sideA]))
	require.Equal(t, []mad.AttrID{mad.AttrREP, mad.AttrDREP, mad.AttrDREQ}, attrsOf(w.sent[sideB]))
	require.Equal(t, uint64(1), w.m[sideA].Counters().Duplicates, "B's DREP crossed A's")
	require.Equal(t, uint64(1), w.m[sideB].Counters().Duplicates, "A's DREP crossed B's")
	w.settle()
	require.Equal(t, []EventType{EventTimewaitExit}, types(w.take(sideA)))
	require.Equal(t, []EventType{EventTimewaitExit}, types(w.take(sideB)))
	require.Zero(t, w.m[sideA].Counters().Retransmits)
}
