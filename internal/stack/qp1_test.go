package stack

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cm"
	"github.com/gorxe/gorxe/cm/mad"
	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/netio"
	"github.com/gorxe/gorxe/packet"
)

// A stack with no QP 1 answers a REQ sent to QP 1 with the REJ "invalid service ID" of ib_cm,
// sent back as a GSI datagram; a datagram for QP 1 that is no GSI MAD (wrong Q_Key) is only
// counted. Both count as packets for an unknown QP.
func TestQP1AnswersWithoutGSIQP(t *testing.T) {
	for _, tc := range []struct{ local, peer string }{{"10.0.0.1", "10.0.0.2"}, {"fd00::1", "fd00::2"}} {
		t.Run(tc.local, func(t *testing.T) { testQP1Answers(t, mustAddr(tc.local), tc.peer) })
	}
}

func testQP1Answers(t *testing.T, local netip.Addr, peerAddr string) {
	x := newRig(t, local.String())
	peer := newRawPeer(t, x, peerAddr)
	req := mad.New(mad.AttrREQ, 0x1234_5678_9abc)
	require.NoError(t, mad.REQ(req.Data()).Encode(&mad.REQFields{LocalCommID: 0xc0ffee, ServiceID: mad.ServiceID(mad.PortSpaceTCP, 7174),
		LocalQPN: 0x11, TransportType: mad.TransportRC, PathMTU: mad.MTU1024, MaxCMRetries: 15}))
	gsi := func(qkey uint32) *packet.Headers {
		return &packet.Headers{BTH: packet.BTHFields{Opcode: packet.UDSendOnly, PKey: packet.DefaultPKey, DestQP: cm.QP1},
			DETH: packet.DETHFields{QKey: qkey, SrcQP: cm.QP1}}
	}
	peer.send(t, local, gsi(packet.GSIQKey+1), req, false)
	peer.send(t, local, gsi(packet.GSIQKey), req, false)

	msgs := make([]netio.Message, 4)
	for i := range msgs {
		msgs[i].Buf = make([]byte, 2048)
	}
	n, err := peer.ep.Receive(msgs)
	require.NoError(t, err)
	require.Equal(t, 1, n, "one answer, to the GSI datagram")
	m := msgs[0]
	assert.Equal(t, netip.AddrPortFrom(local, packet.DefaultUDPSourcePort(cm.QP1)), m.Src)
	assert.Equal(t, netip.AddrPortFrom(mustAddr(peerAddr), packet.UDPPort), m.Dst)
	var p packet.Parsed
	require.NoError(t, packet.Parse(m.Buf, &p))
	env := packet.Envelope{Src: m.Src, Dst: m.Dst}
	if local.Is4() {
		env.IPFlags = packet.IPv4DontFragment
	}
	require.NoError(t, env.VerifyICRC(m.Buf))
	assert.Equal(t, packet.UDSendOnly, p.Opcode())
	assert.Equal(t, uint32(cm.QP1), p.BTH().DestQP())
	assert.Equal(t, uint32(packet.GSIQKey), p.DETH().QKey())
	assert.Equal(t, uint32(cm.QP1), p.DETH().SrcQP())
	rej, err := mad.Parse(p.Payload())
	require.NoError(t, err)
	assert.Equal(t, mad.CMHeader(mad.AttrREJ, 0x1234_5678_9abc), rej.Header().Fields())
	r := mad.REJ(rej.Data())
	assert.Equal(t, uint32(0), r.LocalCommID())
	assert.Equal(t, uint32(0xc0ffee), r.RemoteCommID())
	assert.Equal(t, mad.MsgTypeREQ, r.MsgRejected())
	assert.Equal(t, mad.RejInvalidServiceID, r.Reason())
	assert.Equal(t, uint64(2), x.rt.Counters().Get(counter.RcvdUnknownQPN))
}
