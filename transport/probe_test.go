package transport

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/packet"
)

// probe watches one requester (a) of a connected pair without a working peer: every packet a
// emits is recorded and dropped, and responses are built by hand (or by auto) and delivered to a
// as if b had sent them.
type probe struct {
	t    *testing.T
	h    *harness
	a, b *hEndpoint
	sent []probeSent
	// auto, when set, is called for every packet a emits; the headers it returns (if any) are
	// sent back to a as a response with the given payload.
	auto func(p *packet.Parsed) (*packet.Headers, []byte)
	// pass lets packets through to b instead of dropping them.
	pass func(p *packet.Parsed) bool
	msn  uint32
}

type probeSent struct {
	h   packet.Headers
	n   int // payload length
	at  int64
	raw []byte
}

func newProbe(t *testing.T, o hQPOptions) *probe {
	h := newHarness(t)
	a, b := h.pair(o)
	pr := &probe{t: t, h: h, a: a, b: b}
	h.tap = func(p *hPacket, pp *packet.Parsed) bool {
		if p.path.Src.Addr() != a.d.addr {
			return true
		}
		var hd packet.Headers
		pp.Headers(&hd)
		pr.sent = append(pr.sent, probeSent{h: hd, n: len(pp.Payload()), at: int64(h.now.Sub(hStart)), raw: p.buf})
		if pr.auto != nil {
			if rh, payload := pr.auto(pp); rh != nil {
				pr.h.flight = append(pr.h.flight, pr.build(rh, payload))
			}
		}
		return pr.pass != nil && pr.pass(pp)
	}
	return pr
}

// build encodes a response from b to a.
func (pr *probe) build(hd *packet.Headers, payload []byte) hPacket {
	hd.BTH.DestQP = pr.a.q.QPN()
	hd.BTH.PKey = 0xFFFF
	buf, err := packet.AppendPacket(nil, hd, payload)
	require.NoError(pr.t, err)
	p := hPacket{buf: buf, path: packet.Envelope{
		Src: netipAP(pr.b.d.addr, 0xC001), Dst: netipAP(pr.a.d.addr, packet.UDPPort), HopLimit: 64,
	}}
	env := hEnvelope(&p.path)
	require.NoError(pr.t, env.PutICRC(p.buf))
	return p
}

// respond delivers a hand-built response to a and runs the network until idle (without moving
// the clock).
func (pr *probe) respond(hd *packet.Headers, payload []byte) {
	pr.h.flight = append(pr.h.flight, pr.build(hd, payload))
	pr.h.drain()
}

// ackHeaders returns an ACKNOWLEDGE with syndrome syn for psn.
func (pr *probe) ackHeaders(psn packet.PSN, syn packet.Syndrome) *packet.Headers {
	pr.msn++
	return &packet.Headers{
		BTH:  packet.BTHFields{Opcode: packet.RCAcknowledge, PSN: psn},
		AETH: packet.AETHFields{Syndrome: syn, MSN: pr.msn},
	}
}

// idle runs the network until nothing is in flight, without moving the clock.
func (pr *probe) idle() {
	pr.h.drain()
}
