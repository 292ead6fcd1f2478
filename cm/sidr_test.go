package cm

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cm/mad"
)

// TestSIDRLoss: a lost SIDR_REQ is sent again after the response timeout, a lost SIDR_REP is
// recovered by the retransmitted request, which the passive side answers with the same reply.
func TestSIDRLoss(t *testing.T) {
	udpSID := mad.ServiceID(mad.PortSpaceUDP, 7174)
	for _, tc := range []struct {
		name string
		lose mad.AttrID
	}{
		{"request lost", mad.AttrSIDRREQ},
		{"reply lost", mad.AttrSIDRREP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWire(t, Config{}, Config{})
			require.NoError(t, w.m[sideB].Listen(udpSID))
			lost := false
			w.drop = func(_ int, msg mad.MAD) bool {
				if !lost && msg.Header().AttrID() == tc.lose {
					lost = true
					return true
				}
				return false
			}
			var a ConnID
			w.do(sideA, func(m *Manager, out *Output) (err error) {
				a, err = m.ResolveSIDR(w.now, SIDRParams{ServiceID: udpSID, RemoteGID: gidB}, out)
				return err
			})
			if tc.lose == mad.AttrSIDRREQ {
				require.Empty(t, w.take(sideB))
				require.True(t, w.advance(), "the request is retried")
			}
			evs := w.take(sideB)
			require.Equal(t, []EventType{EventSIDRREQReceived}, types(evs))
			w.do(sideB, func(m *Manager, out *Output) error {
				return m.ReplySIDR(w.now, evs[0].Conn, SIDRReply{QPN: 0x44, QKey: mad.UDPQKey}, out)
			})
			if tc.lose == mad.AttrSIDRREP {
				require.Empty(t, w.take(sideA))
				for len(w.events[sideA]) == 0 {
					require.True(t, w.advance(), "the request is retried")
				}
				require.Empty(t, w.take(sideB), "the retransmitted request is a duplicate, not a new one")
				require.Equal(t, uint64(1), w.m[sideB].Counters().Duplicates)
			}
			evs = w.take(sideA)
			require.Equal(t, []EventType{EventSIDRREPReceived}, types(evs))
			require.Equal(t, a, evs[0].Conn)
			require.Equal(t, uint32(0x44), evs[0].QPN)
			require.NoError(t, SIDRResult(evs[0]))
			require.Equal(t, 2, countAttr(w.sent[sideA], mad.AttrSIDRREQ))
			w.settle()
			require.Zero(t, w.m[sideA].Len())
			require.Zero(t, w.m[sideB].Len())
		})
	}
}

// TestSIDRRefused: a status other than success reaches the requester as a *SIDRError.
func TestSIDRRefused(t *testing.T) {
	udpSID := mad.ServiceID(mad.PortSpaceUDP, 7174)
	for _, status := range []mad.SIDRStatus{mad.SIDRReject, mad.SIDRNoQP, mad.SIDRRedirect, mad.SIDRUnsupportedVersion} {
		t.Run(status.String(), func(t *testing.T) {
			w := newWire(t, Config{}, Config{})
			require.NoError(t, w.m[sideB].Listen(udpSID))
			w.do(sideA, func(m *Manager, out *Output) error {
				_, err := m.ResolveSIDR(w.now, SIDRParams{ServiceID: udpSID, RemoteGID: gidB}, out)
				return err
			})
			evs := w.take(sideB)
			require.Len(t, evs, 1)
			w.do(sideB, func(m *Manager, out *Output) error {
				return m.ReplySIDR(w.now, evs[0].Conn, SIDRReply{Status: status}, out)
			})
			evs = w.take(sideA)
			require.Equal(t, []EventType{EventSIDRREPReceived}, types(evs))
			err := SIDRResult(evs[0])
			require.ErrorIs(t, err, ErrSIDRRefused)
			require.ErrorIs(t, err, &SIDRError{Status: status})
			require.NotErrorIs(t, err, &SIDRError{Status: mad.SIDRUnsupported})
			var se *SIDRError
			require.True(t, errors.As(err, &se))
			assert.Equal(t, status, se.Status)
		})
	}
	t.Run("no listener", func(t *testing.T) {
		w := newWire(t, Config{}, Config{})
		w.do(sideA, func(m *Manager, out *Output) error {
			_, err := m.ResolveSIDR(w.now, SIDRParams{ServiceID: udpSID, RemoteGID: gidB}, out)
			return err
		})
		evs := w.take(sideA)
		require.Len(t, evs, 1)
		require.ErrorIs(t, SIDRResult(evs[0]), &SIDRError{Status: mad.SIDRUnsupported})
		require.Equal(t, "cm: service ID resolution refused: service ID not supported", SIDRResult(evs[0]).Error())
	})
	t.Run("timeout", func(t *testing.T) {
		w := newWire(t, Config{MaxCMRetries: 1}, Config{})
		w.down[sideB] = true
		w.do(sideA, func(m *Manager, out *Output) error {
			_, err := m.ResolveSIDR(w.now, SIDRParams{ServiceID: udpSID, RemoteGID: gidB}, out)
			return err
		})
		w.settle()
		evs := w.take(sideA)
		require.Len(t, evs, 1)
		require.ErrorIs(t, SIDRResult(evs[0]), ErrTimeout)
		require.NotErrorIs(t, SIDRResult(evs[0]), ErrSIDRRefused)
	})
}
