package cm

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cm/mad"
)

// FuzzManager feeds a manager with live connections in several states a
// stream of arbitrary MADs and clock steps. Whatever arrives, it must not
// panic, its indexes must stay consistent, every datagram it emits must be
// a well-formed CM MAD, and its deadline must never lie in the past.
//
// The input is a sequence of records: one byte selecting where the record
// goes (low bits) and how far the clock moves, then a MAD whose first 24
// bytes are forced into a valid CM header (so mutations reach the message
// handlers) with the attribute chosen from the record.
func FuzzManager(f *testing.F) {
	// Seeds: every message kind once, aimed at the connections the fuzz
	// body creates (their IDs come from a fixed Rand).
	for a := mad.AttrREQ; a <= mad.AttrAPR; a++ {
		rec := make([]byte, 1+mad.DataSize)
		rec[0] = byte(a - mad.AttrREQ)
		binary.BigEndian.PutUint32(rec[1:], 0x2001)     // a peer's ID
		binary.BigEndian.PutUint32(rec[1+4:], 0x1000^1) // one of ours
		f.Add(rec)
	}
	f.Add(make([]byte, 3*(1+mad.DataSize)))

	f.Fuzz(func(t *testing.T, data []byte) {
		now := t0
		m := New(Config{CAGUID: guidB, MaxConns: 16, Rand: seq(0x1000), MaxCMRetries: 2})
		require.NoError(t, m.Listen(rpingSID))
		var out Output
		// Live connections: one active in REQSent, one passive in REQRcvd,
		// one passive in REPSent, one SIDR request.
		_, err := m.Connect(now, rpingParams(t), &out)
		require.NoError(t, err)
		m.Receive(now, Addr{GID: gidA, QPN: QP1}, rawREQ(1, goodREQ()), &out)
		f2 := goodREQ()
		f2.LocalCommID, f2.LocalQPN = 0x2001, 0x88
		m.Receive(now, Addr{GID: gidA, QPN: QP1}, rawREQ(2, f2), &out)
		for _, e := range out.Events {
			if e.Type == EventREQReceived && e.Attrs.RemoteQPN == 0x88 {
				require.NoError(t, m.Accept(now, e.Conn, rpingAccept(), &out))
			}
		}
		_, err = m.ResolveSIDR(now, SIDRParams{ServiceID: 5, RemoteGID: gidA}, &out)
		require.NoError(t, err)

		for len(data) > 0 {
			sel := data[0]
			data = data[1:]
			n := min(len(data), mad.DataSize)
			msg := mad.New(mad.AttrREQ+mad.AttrID(sel%11), uint64(sel))
			copy(msg.Data(), data[:n])
			data = data[n:]
			now = now.Add(time.Duration(sel>>4) * time.Second)
			out.Reset()
			m.Tick(now, &out)
			m.Receive(now, Addr{GID: gidA, QPN: QP1}, msg, &out)
			// Exercise the consumer commands on whatever the events name.
			for _, e := range out.Events {
				switch e.Type {
				case EventREQReceived:
					_ = m.Accept(now, e.Conn, rpingAccept(), &out)
				case EventREPReceived:
					_ = m.SendRTU(now, e.Conn, nil, &out)
				case EventDREQReceived:
					_ = m.Disconnect(now, e.Conn, nil, &out)
				case EventSIDRREQReceived:
					_ = m.ReplySIDR(now, e.Conn, SIDRReply{QPN: 1}, &out)
				}
			}
			for _, d := range out.Datagrams {
				_, err := mad.Parse(d.MAD)
				require.NoError(t, err)
			}
			if d := m.Deadline(); !d.IsZero() {
				require.True(t, d.After(now), "Tick ran everything due at now")
			}
			checkIndexes(t, m)
		}
	})
}

// checkIndexes verifies that the manager's lookup tables point only at
// connections it holds, under the keys those connections have.
func checkIndexes(t *testing.T, m *Manager) {
	t.Helper()
	require.LessOrEqual(t, len(m.conns), m.cfg.MaxConns)
	for k, c := range m.byRemote {
		require.Same(t, c, m.conns[c.id])
		require.Equal(t, remoteKey{c.remoteID, c.remoteGUID}, k)
	}
	for k, c := range m.byQPN {
		require.Same(t, c, m.conns[c.id])
		require.Equal(t, qpKey{c.attrs.RemoteQPN, c.remoteGUID}, k)
	}
	for k, c := range m.bySIDR {
		require.Same(t, c, m.conns[c.id])
		require.Equal(t, sidrKey{c.remoteID, c.peer.GID}, k)
	}
	for id, c := range m.conns {
		require.Equal(t, id, c.id)
		require.NotEqual(t, StateIdle, c.state)
		if c.state == StateTimewait {
			require.False(t, c.deadline.IsZero(), "timewait always ends")
		}
		if c.pending != nil {
			require.False(t, c.deadline.IsZero(), "a pending message has a timer")
		}
	}
}
