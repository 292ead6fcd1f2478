package cm

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cm/mad"
	"github.com/gorxe/gorxe/packet"
)

// TestHandshakeMatchesKernelCapture replays rping's connection from the
// bundled kernel rxe capture: with the same IDs, PSNs, GUIDs, QPNs and the
// 6.1 kernel's packet lifetime (18), every MAD gorxe sends — REQ, REP, RTU,
// DREQ, DREP — is byte for byte the one the kernel sent.
func TestHandshakeMatchesKernelCapture(t *testing.T) {
	w := newWire(t,
		Config{TIDHigh: 2, PacketLifeTime: 18, Rand: seq(0xfeb6ce1c^1, 0x99c403)},
		Config{TIDHigh: 7, PacketLifeTime: 18, Rand: seq(0x8f4b6254^1, 0x8a4ed1)})
	var a, b ConnID
	w.do(sideA, func(m *Manager, out *Output) (err error) {
		a, err = m.Connect(w.now, rpingParams(t), out)
		return err
	})
	require.Equal(t, ConnID(0xfeb6ce1c), a)
	require.Equal(t, captureMAD(t, 2411), []byte(w.sent[sideA][0]), "REQ")

	evs := w.take(sideB)
	require.Len(t, evs, 1)
	req := evs[0]
	require.Equal(t, EventREQReceived, req.Type)
	require.Equal(t, StateREQRcvd, req.State)
	require.Equal(t, uint64(rpingSID), req.ServiceID)
	require.Equal(t, w.addr[sideA], req.Peer)
	h := mad.CMAHeader(req.PrivateData)
	require.Equal(t, "10.99.0.3", h.Src().String())
	require.Equal(t, uint16(36338), h.SrcPort())
	b = req.Conn

	accept := rpingAccept()
	accept.LocalQPN = 0x29
	w.do(sideB, func(m *Manager, out *Output) error { return m.Accept(w.now, b, accept, out) })
	require.Equal(t, captureMAD(t, 2412), []byte(w.sent[sideB][0]), "REP")
	require.Equal(t, StateREPSent, w.state(sideB, b))
	require.Equal(t, []EventType{EventREPReceived}, types(w.take(sideA)))
	require.Equal(t, StateREPRcvd, w.state(sideA, a))

	w.do(sideA, func(m *Manager, out *Output) error { return m.SendRTU(w.now, a, nil, out) })
	require.Equal(t, captureMAD(t, 2413), []byte(w.sent[sideA][1]), "RTU")
	require.Equal(t, []EventType{EventEstablished}, types(w.take(sideA)))
	require.Equal(t, []EventType{EventEstablished}, types(w.take(sideB)))

	// The PSNs the kernel's QPs then used: the client's first SEND (frame
	// 2414) starts at the REP's Starting PSN and the server's first packet,
	// its READ request (frame 2416), at the REQ's.
	ia, _ := w.m[sideA].Conn(a)
	ib, _ := w.m[sideB].Conn(b)
	require.Equal(t, capturePSN(t, 2414), ia.Attrs.SQPSN, "client's send PSN")
	require.Equal(t, capturePSN(t, 2416), ia.Attrs.RQPSN, "client's receive PSN")
	require.Equal(t, capturePSN(t, 2416), ib.Attrs.SQPSN, "server's send PSN")
	require.Equal(t, capturePSN(t, 2414), ib.Attrs.RQPSN, "server's receive PSN")

	w.do(sideA, func(m *Manager, out *Output) error { return m.Disconnect(w.now, a, nil, out) })
	require.Equal(t, captureMAD(t, 2534), []byte(w.sent[sideA][2]), "DREQ")
	require.Equal(t, []EventType{EventDREQReceived}, types(w.take(sideB)))
	w.do(sideB, func(m *Manager, out *Output) error { return m.Disconnect(w.now, b, nil, out) })
	require.Equal(t, captureMAD(t, 2535), []byte(w.sent[sideB][1]), "DREP")
	require.Equal(t, []EventType{EventDisconnected}, types(w.take(sideA)))
	require.Equal(t, StateTimewait, w.state(sideA, a))
	require.Equal(t, StateTimewait, w.state(sideB, b))
	require.Zero(t, w.m[sideA].Counters().Retransmits)
}

// TestNegotiatedAttrs checks that each side's QP attributes mirror the
// other's, as librdmacm would apply them.
func TestNegotiatedAttrs(t *testing.T) {
	w := newWire(t, Config{Rand: seq(0x100, 0x111111)}, Config{Rand: seq(0x200, 0x222222)})
	p := rpingParams(t)
	p.ResponderResources, p.InitiatorDepth = 4, 2
	p.RetryCount, p.RNRRetryCount = 6, 5
	p.Path.TrafficClass, p.Path.SL = 0x68, 3
	var a ConnID
	w.do(sideA, func(m *Manager, out *Output) (err error) {
		a, err = m.Connect(w.now, p, out)
		return err
	})
	b := w.take(sideB)[0].Conn
	w.do(sideB, func(m *Manager, out *Output) error {
		return m.Accept(w.now, b, AcceptParams{LocalQPN: qpnB, ResponderResources: 2, InitiatorDepth: 4, RNRRetryCount: 3}, out)
	})
	w.do(sideA, func(m *Manager, out *Output) error { return m.SendRTU(w.now, a, nil, out) })
	ia, _ := w.m[sideA].Conn(a)
	ib, _ := w.m[sideB].Conn(b)

	require.Equal(t, QPAttrs{
		Transport: mad.TransportRC, LocalQPN: qpnA, RemoteQPN: qpnB,
		// Each side receives from the PSN it chose and sends from the peer's.
		SQPSN: 0x222222, RQPSN: 0x111111, PathMTU: mad.MTU1024, PKey: packet.DefaultPKey,
		MaxDestRdAtomic: 4, // the REP's initiator depth
		MaxRdAtomic:     2, // the REP's responder resources
		RetryCount:      6,
		RNRRetry:        3,                                                        // what the REP asks of us
		Timeout:         mad.AckTimeout(DefaultCAAckDelay, DefaultPacketLifeTime), // 17
		LocalGID:        gidA, RemoteGID: gidB, FlowLabel: 0x14c54, TrafficClass: 0x68, HopLimit: 64, SL: 3,
	}, ia.Attrs)
	require.Equal(t, QPAttrs{
		Transport: mad.TransportRC, LocalQPN: qpnB, RemoteQPN: qpnA,
		SQPSN: 0x111111, RQPSN: 0x222222, PathMTU: mad.MTU1024, PKey: packet.DefaultPKey,
		MaxDestRdAtomic: 2, MaxRdAtomic: 4,
		RetryCount: 6,
		RNRRetry:   5,  // what the REQ asks of us
		Timeout:    17, // the REQ's local ACK timeout
		LocalGID:   gidB, RemoteGID: gidA, FlowLabel: 0x14c54, TrafficClass: 0x68, HopLimit: 64, SL: 3,
	}, ib.Attrs)
	require.True(t, ia.Active)
	require.False(t, ib.Active)
	require.Equal(t, uint32(b), ia.RemoteCommID)
	require.Equal(t, uint32(a), ib.RemoteCommID)
	require.Equal(t, uint64(guidB), ia.RemoteCAGUID)
}

// TestTimewaitExpiry checks that a connection leaves timewait exactly one
// local ACK timeout after entering it, and not before.
func TestTimewaitExpiry(t *testing.T) {
	w := newWire(t, Config{}, Config{})
	a, b := w.connect()
	w.do(sideA, func(m *Manager, out *Output) error { return m.Disconnect(w.now, a, nil, out) })
	w.do(sideB, func(m *Manager, out *Output) error { return m.Disconnect(w.now, b, nil, out) })
	entered := w.now
	wait := mad.Timeout(17) // AckTimeout(15, 16)
	require.Equal(t, entered.Add(wait), w.m[sideA].Deadline())
	require.Equal(t, entered.Add(wait), w.m[sideB].Deadline())

	var out Output
	w.m[sideA].Tick(entered.Add(wait-1), &out)
	require.Empty(t, out.Events)
	require.Equal(t, StateTimewait, w.state(sideA, a))

	w.take(sideA)
	w.take(sideB)
	require.True(t, w.advance())
	require.Equal(t, entered.Add(wait), w.now)
	require.Equal(t, []EventType{EventTimewaitExit}, types(w.take(sideA)))
	require.Equal(t, []EventType{EventTimewaitExit}, types(w.take(sideB)))
	require.Zero(t, w.m[sideA].Len())
	require.Zero(t, w.m[sideB].Len())
	require.True(t, w.m[sideA].Deadline().IsZero())
	_, ok := w.m[sideA].Conn(a)
	require.False(t, ok)
	require.ErrorIs(t, w.m[sideA].Disconnect(w.now, a, nil, &out), ErrUnknownConn)
}

// TestNotifyEstablished: the passive side's QP saw traffic before the RTU.
func TestNotifyEstablished(t *testing.T) {
	w := newWire(t, Config{}, Config{})
	w.drop = func(from int, m mad.MAD) bool { return m.Header().AttrID() == mad.AttrRTU }
	var a ConnID
	w.do(sideA, func(m *Manager, out *Output) (err error) {
		a, err = m.Connect(w.now, rpingParams(t), out)
		return err
	})
	b := w.take(sideB)[0].Conn
	w.do(sideB, func(m *Manager, out *Output) error { return m.Accept(w.now, b, rpingAccept(), out) })
	w.do(sideA, func(m *Manager, out *Output) error { return m.SendRTU(w.now, a, nil, out) })
	require.Equal(t, StateREPSent, w.state(sideB, b))
	w.do(sideB, func(m *Manager, out *Output) error { return m.NotifyEstablished(w.now, b, out) })
	require.Equal(t, []EventType{EventEstablished}, types(w.take(sideB)))
	require.Equal(t, StateEstablished, w.state(sideB, b))
	require.True(t, w.m[sideB].Deadline().IsZero(), "the REP is no longer retransmitted")
	w.do(sideB, func(m *Manager, out *Output) error { return m.NotifyEstablished(w.now, b, out) })
	require.Empty(t, w.take(sideB), "a second notification changes nothing")
}
