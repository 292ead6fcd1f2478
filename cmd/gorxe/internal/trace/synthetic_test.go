package trace

import (
	"bytes"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/packet"
)

// TestNAKAndRetransmission draws a go-back-N recovery as a capture point between the two QPs
// sees it: WRITE_MIDDLE 102 never passes, the responder NAKs, the requester resends from 102.
// Then an RNR NAK and its resend after a two-second pause, a READ whose reserved PSNs are not
// a gap, a remote access NAK, a packet the network duplicated and the same packet resent when
// the requester's ACK timer expired.
func TestNAKAndRetransmission(t *testing.T) {
	a, b := rcPair(0x11, 0x12)
	s := newSynth(t)
	s.req(a, b, packet.RCRDMAWriteFirst, 100, 1024)
	s.req(a, b, packet.RCRDMAWriteMiddle, 101, 1024)
	s.req(a, b, packet.RCRDMAWriteMiddle, 103, 1024)
	s.req(a, b, packet.RCRDMAWriteLast, 104, 1024)
	s.ack(b, a, 102, packet.SyndromeNAKPSNSequenceError, 0)
	s.req(a, b, packet.RCRDMAWriteMiddle, 102, 1024)
	s.req(a, b, packet.RCRDMAWriteMiddle, 103, 1024)
	s.req(a, b, packet.RCRDMAWriteLast, 104, 1024)
	s.ack(b, a, 104, packet.SyndromeACKUnlimited, 1)
	s.ack(b, a, 104, packet.SyndromeACKUnlimited, 1)
	s.after(2 * time.Second)
	s.req(a, b, packet.RCSendOnly, 105, 64)
	s.ack(b, a, 105, packet.SyndromeRNRNAK(14), 1)
	s.req(a, b, packet.RCSendOnly, 105, 64)
	s.ack(b, a, 105, packet.SyndromeACKUnlimited, 2)
	s.req(a, b, packet.RCRDMAReadRequest, 106, 0)
	s.ack(b, a, 106, packet.SyndromeNAKRemoteAccessError, 2)
	s.req(a, b, packet.RCSendOnly, 110, 8)
	s.req(a, b, packet.RCSendOnly, 110, 8) // copied by the network: at once, nothing prompted it
	s.after(70 * time.Millisecond)
	s.req(a, b, packet.RCSendOnly, 110, 8) // the ACK timer expired: the same bytes, sent again

	d, err := Build(bytes.NewReader(s.bytes()), defaults(), false)
	require.NoError(t, err)
	svg := svgOf(t, d)
	assert.Equal(t, []string{"10.0.0.1 QP 0x000011", "10.0.0.2 QP 0x000012"}, svg.lanes)
	assert.Equal(t, []string{
		"pkt: RC_RDMA_WRITE_FIRST psn=100 len=1024",
		"pkt: RC_RDMA_WRITE_MIDDLE psn=101 len=1024",
		"loss: lost psn=102",
		"pkt: RC_RDMA_WRITE_MIDDLE psn=103 len=1024",
		"pkt: RC_RDMA_WRITE_LAST psn=104 len=1024",
		"pkt: RC_ACKNOWLEDGE psn=102 len=0 NAK_PSN_SEQUENCE_ERROR",
		"pkt: RC_RDMA_WRITE_MIDDLE psn=102 len=1024 [fills gap]",
		"pkt: RC_RDMA_WRITE_MIDDLE psn=103 len=1024 [retransmission]",
		"pkt: RC_RDMA_WRITE_LAST psn=104 len=1024 [retransmission]",
		"pkt: RC_ACKNOWLEDGE psn=104 len=0 ACK",
		"pkt: RC_ACKNOWLEDGE psn=104 len=0 ACK [duplicate]",
		"gap: 2s without packets",
		"pkt: RC_SEND_ONLY psn=105 len=64",
		"pkt: RC_ACKNOWLEDGE psn=105 len=0 RNR_NAK(1.28ms)",
		"pkt: RC_SEND_ONLY psn=105 len=64 [retransmission]",
		"pkt: RC_ACKNOWLEDGE psn=105 len=0 ACK",
		"pkt: RC_RDMA_READ_REQUEST psn=106 dmalen=0",
		"pkt: RC_ACKNOWLEDGE psn=106 len=0 NAK_REMOTE_ACCESS_ERROR",
		"pkt: RC_SEND_ONLY psn=110 len=8",
		"pkt: RC_SEND_ONLY psn=110 len=8 [duplicate]",
		"gap: 70ms without packets",
		"pkt: RC_SEND_ONLY psn=110 len=8 [retransmission]",
	}, svg.rows)
	assert.Equal(t, "19 packets, 2 endpoints: 5 retransmissions, 2 duplicates, 1 loss, 2 NAKs, 1 RNR NAK", d.Summary())
	for frame, class := range map[int]string{
		3:  "pkt req",
		5:  "pkt nakseq",
		6:  "pkt req fill",
		7:  "pkt req retx",
		9:  "pkt ack",
		10: "pkt ack dup",
		12: "pkt rnr",
		16: "pkt nak",
		18: "pkt req dup",
	} {
		assert.Equal(t, class, svg.class[frame], "frame %d", frame)
	}
}

// TestMiddleRunsCollapse checks that a burst of MIDDLE packets becomes one band, and that
// -collapse 0 keeps every arrow.
func TestMiddleRunsCollapse(t *testing.T) {
	a, b := rcPair(0x20, 0x21)
	s := newSynth(t)
	s.req(a, b, packet.RCRDMAWriteFirst, 200, 1024)
	for psn := packet.PSN(201); psn <= 206; psn++ {
		s.req(a, b, packet.RCRDMAWriteMiddle, psn, 1024)
	}
	s.req(a, b, packet.RCRDMAWriteLast, 207, 100)
	s.ack(b, a, 207, packet.SyndromeACKUnlimited, 1)

	for _, tc := range []struct {
		collapse int
		rows     []string
	}{
		{4, []string{
			"pkt: RC_RDMA_WRITE_FIRST psn=200 len=1024",
			"band: RC_RDMA_WRITE_MIDDLE ×6 psn=201..206 len=6144",
			"pkt: RC_RDMA_WRITE_LAST psn=207 len=100",
			"pkt: RC_ACKNOWLEDGE psn=207 len=0 ACK",
		}},
		{7, []string{
			"pkt: RC_RDMA_WRITE_FIRST psn=200 len=1024",
			"pkt: RC_RDMA_WRITE_MIDDLE psn=201 len=1024",
			"pkt: RC_RDMA_WRITE_MIDDLE psn=202 len=1024",
			"pkt: RC_RDMA_WRITE_MIDDLE psn=203 len=1024",
			"pkt: RC_RDMA_WRITE_MIDDLE psn=204 len=1024",
			"pkt: RC_RDMA_WRITE_MIDDLE psn=205 len=1024",
			"pkt: RC_RDMA_WRITE_MIDDLE psn=206 len=1024",
			"pkt: RC_RDMA_WRITE_LAST psn=207 len=100",
			"pkt: RC_ACKNOWLEDGE psn=207 len=0 ACK",
		}},
	} {
		o := defaults()
		o.Collapse = tc.collapse
		d, err := Build(bytes.NewReader(s.bytes()), o, false)
		require.NoError(t, err)
		assert.Equal(t, tc.rows, svgOf(t, d).rows, "collapse %d", tc.collapse)
	}
	o := defaults()
	o.Collapse = 0
	d, err := Build(bytes.NewReader(s.bytes()), o, false)
	require.NoError(t, err)
	assert.Len(t, svgOf(t, d).rows, 9, "collapse 0")
}

// TestSenderQPN checks how a packet's sender is named: a UD sender by its DETH; an RC sender
// with no reply on its port by the one QP known at its address whose product with the
// destination QPN gives the port; a sender with neither stays unknown rather than guessed.
func TestSenderQPN(t *testing.T) {
	a, b := rcPair(0x30, 0x31)
	c, d := rcPair(0x50, 0x51)
	s := newSynth(t)
	s.req(a, b, packet.RCSendOnly, 1, 8)
	h := packet.Headers{BTH: packet.BTHFields{Opcode: packet.UDSendOnly, PSN: 7}}
	h.DETH = packet.DETHFields{QKey: 0x11111111, SrcQP: 0x31}
	s.send(b, a, h, 16)
	s.req(c, d, packet.RCSendOnly, 1, 8)
	dg, err := Build(bytes.NewReader(s.bytes()), defaults(), false)
	require.NoError(t, err)
	assert.Equal(t, []string{"10.0.0.1 QP 0x000030", "10.0.0.2 QP 0x000031", "10.0.0.1 QP ?", "10.0.0.2 QP 0x000051"}, svgOf(t, dg).lanes)
}

// TestReadRecovery draws a READ whose third response packet is lost: the requester asks again
// for the rest from that PSN, so the re-request and the responses sent again are marked, and
// the hole in the first response becomes a loss once the second response fills it.
func TestReadRecovery(t *testing.T) {
	a, b := rcPair(0x40, 0x41)
	s := newSynth(t)
	s.read(a, b, 300, 4096)
	s.resp(b, a, packet.RCRDMAReadResponseFirst, 300, 1024)
	s.resp(b, a, packet.RCRDMAReadResponseMiddle, 301, 1024)
	s.resp(b, a, packet.RCRDMAReadResponseLast, 303, 1024)
	s.read(a, b, 302, 2048)
	s.resp(b, a, packet.RCRDMAReadResponseFirst, 302, 1024)
	s.resp(b, a, packet.RCRDMAReadResponseLast, 303, 1024)
	s.req(a, b, packet.RCSendOnly, 304, 8)

	d, err := Build(bytes.NewReader(s.bytes()), defaults(), false)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"pkt: RC_RDMA_READ_REQUEST psn=300 dmalen=4096",
		"pkt: RC_RDMA_READ_RESPONSE_FIRST psn=300 len=1024 ACK",
		"pkt: RC_RDMA_READ_RESPONSE_MIDDLE psn=301 len=1024",
		"loss: lost psn=302",
		"pkt: RC_RDMA_READ_RESPONSE_LAST psn=303 len=1024 ACK",
		"pkt: RC_RDMA_READ_REQUEST psn=302 dmalen=2048 [retransmission]",
		"pkt: RC_RDMA_READ_RESPONSE_FIRST psn=302 len=1024 ACK [fills gap]",
		"pkt: RC_RDMA_READ_RESPONSE_LAST psn=303 len=1024 ACK [retransmission]",
		"pkt: RC_SEND_ONLY psn=304 len=8",
	}, svgOf(t, d).rows)
}

// TestIPv6 checks that IPv6 endpoints are named by their address, and that both directions of
// a connection over IPv6 meet on the same two lines.
func TestIPv6(t *testing.T) {
	a, b := rcPair(0x11, 0x12)
	a.addr, b.addr = netip.MustParseAddr("fd00::1"), netip.MustParseAddr("fd00::2")
	s := newSynth(t)
	s.req(a, b, packet.RCSendOnly, 5, 32)
	s.ack(b, a, 5, packet.SyndromeACKUnlimited, 1)
	d, err := Build(bytes.NewReader(s.bytes()), defaults(), false)
	require.NoError(t, err)
	svg := svgOf(t, d)
	assert.Equal(t, []string{"fd00::1 QP 0x000011", "fd00::2 QP 0x000012"}, svg.lanes)
	assert.Equal(t, []string{"pkt: RC_SEND_ONLY psn=5 len=32", "pkt: RC_ACKNOWLEDGE psn=5 len=0 ACK"}, svg.rows)
}
