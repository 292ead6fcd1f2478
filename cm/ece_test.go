package cm

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cm/mad"
)

// TestECEBothWays: the active side's ECE arrives in the REQReceived event, the passive side's in
// the REPReceived event, each from the vendor ID field of its message and the options in the MAD
// header's attribute modifier; a retransmitted REQ carries them again.
func TestECEBothWays(t *testing.T) {
	w := newWire(t, Config{}, Config{})
	reqECE := ECE{VendorID: 0x02c9a1, Options: 0xfedcba98}
	repECE := ECE{VendorID: 0x02c9a1, Options: 0x00000005}
	p := rpingParams(t)
	p.ECE = reqECE
	w.down[sideB] = true // the first REQ is lost
	var a ConnID
	w.do(sideA, func(m *Manager, out *Output) (err error) {
		a, err = m.Connect(w.now, p, out)
		return err
	})
	w.down[sideB] = false
	require.True(t, w.advance())
	require.Len(t, w.sent[sideA], 2)
	require.Equal(t, w.sent[sideA][0], w.sent[sideA][1], "retransmitted verbatim")
	require.Equal(t, reqECE.Options, w.sent[sideA][1].Header().AttrMod())
	require.Equal(t, reqECE.VendorID, mad.REQ(w.sent[sideA][1].Data()).VendorID())

	evs := w.take(sideB)
	require.Len(t, evs, 1)
	require.Equal(t, EventREQReceived, evs[0].Type)
	require.Equal(t, reqECE, evs[0].ECE)

	acc := rpingAccept()
	acc.ECE = repECE
	w.do(sideB, func(m *Manager, out *Output) error { return m.Accept(w.now, evs[0].Conn, acc, out) })
	rep := w.sent[sideB][0]
	require.Equal(t, mad.AttrREP, rep.Header().AttrID())
	require.Equal(t, repECE.Options, rep.Header().AttrMod())
	require.Equal(t, repECE.VendorID, mad.REP(rep.Data()).VendorID())
	evs = w.take(sideA)
	require.Len(t, evs, 1)
	require.Equal(t, EventREPReceived, evs[0].Type)
	require.Equal(t, repECE, evs[0].ECE)
	w.do(sideA, func(m *Manager, out *Output) error { return m.SendRTU(w.now, a, nil, out) })
	require.Equal(t, []EventType{EventEstablished}, types(w.take(sideB)))
}

// TestECENone: without ECE the REQ and REP carry zeros, which is what a peer without ECE reads
// (and what the kernel capture's REQ and REP hold, see TestHandshakeMatchesKernelCapture).
func TestECENone(t *testing.T) {
	w := newWire(t, Config{}, Config{})
	w.do(sideA, func(m *Manager, out *Output) (err error) {
		_, err = m.Connect(w.now, rpingParams(t), out)
		return err
	})
	evs := w.take(sideB)
	require.Len(t, evs, 1)
	require.Equal(t, ECE{}, evs[0].ECE)
	w.do(sideB, func(m *Manager, out *Output) error { return m.Accept(w.now, evs[0].Conn, rpingAccept(), out) })
	evs = w.take(sideA)
	require.Len(t, evs, 1)
	require.Equal(t, ECE{}, evs[0].ECE)
	require.Zero(t, w.sent[sideA][0].Header().AttrMod())
	require.Zero(t, w.sent[sideB][0].Header().AttrMod())
}

// TestECEVendorIDTooWide: a vendor ID that does not fit its 24 bits is refused, not truncated.
func TestECEVendorIDTooWide(t *testing.T) {
	w := newWire(t, Config{}, Config{})
	p := rpingParams(t)
	p.ECE.VendorID = 0x1000000
	var out Output
	_, err := w.m[sideA].Connect(w.now, p, &out)
	require.ErrorIs(t, err, ErrInvalidParam)
	require.Empty(t, out.Datagrams)

	w.do(sideA, func(m *Manager, out *Output) (err error) {
		_, err = m.Connect(w.now, rpingParams(t), out)
		return err
	})
	evs := w.take(sideB)
	require.Len(t, evs, 1)
	acc := rpingAccept()
	acc.ECE.VendorID = 0xffffffff
	require.ErrorIs(t, w.m[sideB].Accept(w.now, evs[0].Conn, acc, &out), ErrInvalidParam)
	require.Empty(t, out.Datagrams)
}

// TestRejectVendorOptionNotSupported: the passive side refuses the REQ's ECE options
// (rdma_reject_ece): a REJ with reason 35 and the consumer's private data, reported to the active
// side as a rejection with that reason.
func TestRejectVendorOptionNotSupported(t *testing.T) {
	w := newWire(t, Config{}, Config{})
	p := rpingParams(t)
	p.ECE = ECE{VendorID: 0x02c9a1, Options: 1}
	w.do(sideA, func(m *Manager, out *Output) (err error) {
		_, err = m.Connect(w.now, p, out)
		return err
	})
	evs := w.take(sideB)
	require.Len(t, evs, 1)
	w.do(sideB, func(m *Manager, out *Output) error {
		return m.Reject(w.now, evs[0].Conn, mad.RejVendorOptionNotSupported, nil, []byte("ece"), out)
	})
	rej := mad.REJ(w.sent[sideB][0].Data())
	require.Equal(t, mad.RejVendorOptionNotSupported, rej.Reason())
	require.Equal(t, mad.MsgTypeREQ, rej.MsgRejected())
	require.Empty(t, rej.ARI())
	evs = w.take(sideA)
	require.Len(t, evs, 1)
	require.Equal(t, EventRejected, evs[0].Type)
	require.Equal(t, &RejectError{Reason: mad.RejVendorOptionNotSupported}, evs[0].Err)
	require.Equal(t, "ece", string(evs[0].PrivateData[:3]))
	require.Equal(t, "cm: connection rejected: vendor option not supported", evs[0].Err.Error())
}
