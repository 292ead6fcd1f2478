package trace

import (
	"bytes"
	"net/netip"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/packet"
)

// synth builds a capture of raw IPv4 frames packet by packet, for exchanges the kernel capture
// does not show (NAKs, RNR NAKs, losses).
type synth struct {
	t   *testing.T
	buf bytes.Buffer
	w   *pcapgo.Writer
	now time.Time
}

func newSynth(t *testing.T) *synth {
	t.Helper()
	s := &synth{t: t, now: time.Unix(1_700_000_000, 0)}
	s.w = pcapgo.NewWriter(&s.buf)
	require.NoError(t, s.w.WriteFileHeader(65535, gplayers.LinkTypeRaw))
	return s
}

// qp is one end of a synthetic RC connection.
type qp struct {
	addr netip.Addr
	qpn  uint32
	port uint16 // UDP source port, shared by both ends as the kernel picks it
}

// rcPair returns the two ends of an RC connection between QP a at 10.0.0.1 and QP b at
// 10.0.0.2.
func rcPair(a, b uint32) (qp, qp) {
	port := packet.UDPSourcePort(0, a, b)
	return qp{netip.MustParseAddr("10.0.0.1"), a, port}, qp{netip.MustParseAddr("10.0.0.2"), b, port}
}

// after moves the capture clock on by d.
func (s *synth) after(d time.Duration) *synth {
	s.now = s.now.Add(d)
	return s
}

// send captures a packet from one QP to the other, 10µs after the previous one.
func (s *synth) send(from, to qp, h packet.Headers, payloadLen int) {
	s.t.Helper()
	h.BTH.PKey = 0xFFFF
	h.BTH.DestQP = to.qpn
	pkt, err := packet.AppendPacket(nil, &h, make([]byte, payloadLen))
	require.NoError(s.t, err)
	env := packet.Envelope{
		Src:     netip.AddrPortFrom(from.addr, from.port),
		Dst:     netip.AddrPortFrom(to.addr, 4791),
		IPFlags: packet.IPv4DontFragment, HopLimit: 64,
	}
	require.NoError(s.t, env.PutICRC(pkt))
	frame, err := env.AppendHeaders(nil, len(pkt))
	require.NoError(s.t, err)
	frame = append(frame, pkt...)
	s.now = s.now.Add(10 * time.Microsecond)
	ci := gopacket.CaptureInfo{Timestamp: s.now, CaptureLength: len(frame), Length: len(frame)}
	require.NoError(s.t, s.w.WritePacket(ci, frame))
}

// req sends a request without extension headers.
func (s *synth) req(from, to qp, op packet.Opcode, psn packet.PSN, payloadLen int) {
	s.t.Helper()
	h := packet.Headers{BTH: packet.BTHFields{Opcode: op, PSN: psn}}
	h.RETH.DMALength = uint32(payloadLen)
	s.send(from, to, h, payloadLen)
}

// ack sends an ACKNOWLEDGE with syndrome syn for PSN psn.
func (s *synth) ack(from, to qp, psn packet.PSN, syn packet.Syndrome, msn uint32) {
	s.t.Helper()
	h := packet.Headers{BTH: packet.BTHFields{Opcode: packet.RCAcknowledge, PSN: psn}}
	h.AETH = packet.AETHFields{Syndrome: syn, MSN: msn}
	s.send(from, to, h, 0)
}

func (s *synth) bytes() []byte { return s.buf.Bytes() }

// read sends an RDMA READ request for dmaLen bytes.
func (s *synth) read(from, to qp, psn packet.PSN, dmaLen uint32) {
	s.t.Helper()
	h := packet.Headers{BTH: packet.BTHFields{Opcode: packet.RCRDMAReadRequest, PSN: psn}}
	h.RETH.DMALength = dmaLen
	s.send(from, to, h, 0)
}

// resp sends a READ response packet; those that carry an AETH carry a plain ACK.
func (s *synth) resp(from, to qp, op packet.Opcode, psn packet.PSN, payloadLen int) {
	s.t.Helper()
	h := packet.Headers{BTH: packet.BTHFields{Opcode: op, PSN: psn}}
	h.AETH.Syndrome = packet.SyndromeACKUnlimited
	s.send(from, to, h, payloadLen)
}
