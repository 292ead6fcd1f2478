package packet

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cmREQFlowLabels returns the flow labels of the RDMA-CM REQs in the capture
// (UD SEND_ONLY MADs to QP1 with attribute ID 0x10), and checks each against
// CMFlowLabel of the ports in the REQ's CMA header and service ID.
func cmREQFlowLabels(t *testing.T) map[uint32]bool {
	const (
		madHeader      = 24
		madAttrID      = 16
		cmAttrREQ      = 0x10
		reqServiceID   = madHeader + 8
		reqFlowLabel   = madHeader + 88
		reqPrivateData = madHeader + 140
		cmaHdrSrcPort  = 2
		flowLabelShift = 12
	)
	out := map[uint32]bool{}
	var p Parsed
	for _, g := range golden(t) {
		if err := Parse(g.pkt, &p); err != nil || p.Opcode() != UDSendOnly || p.BTH().DestQP() != 1 {
			continue
		}
		mad := p.Payload()
		if len(mad) < 256 || binary.BigEndian.Uint16(mad[madAttrID:]) != cmAttrREQ {
			continue
		}
		fl := binary.BigEndian.Uint32(mad[reqFlowLabel:]) >> flowLabelShift
		src := binary.BigEndian.Uint16(mad[reqPrivateData+cmaHdrSrcPort:])
		dst := uint16(binary.BigEndian.Uint64(mad[reqServiceID:])) // port space << 16 | port
		want := CMFlowLabel(src, dst)
		assert.Equal(t, want, fl, "frame %d: REQ flow label %#x, CMFlowLabel(%d, %d) = %#x", g.frame, fl, src, dst, want)
		out[fl] = true
	}
	require.NotEqual(t, 0, len(out), "no CM REQ in the capture")
	return out
}

func TestUDPSourcePortGolden(t *testing.T) {
	// In the capture both hosts created their QPs in the same order, so each
	// RC/UC connection joins two QPs of the same number, except those that
	// the connection manager set up, whose port comes from the REQ's flow
	// label. UD packets use the sending QP's creation-time port.
	cmPorts := map[uint16]bool{}
	for fl := range cmREQFlowLabels(t) {
		cmPorts[UDPSourcePort(fl, 0, 0)] = true
	}
	var p Parsed
	checked := map[Transport]int{}
	for _, g := range golden(t) {
		require.NoError(t, Parse(g.pkt, &p))
		var want uint16
		switch tr := p.Opcode().Transport(); tr {
		case TransportRC, TransportUC:
			q := p.BTH().DestQP()
			want = UDPSourcePort(0, q, q)
			checked[tr]++
		case TransportUD:
			want = DefaultUDPSourcePort(p.DETH().SrcQP())
			checked[tr]++
		}
		got := g.env.Src.Port()
		require.False(t, got != want && !cmPorts[got], "frame %d (%v): source port %d, rxe's formula gives %d", g.frame, p.Opcode(), got, want)
	}
	assert.False(t, checked[TransportRC] == 0 || checked[TransportUC] == 0 || checked[TransportUD] == 0, "transports checked: %v", checked)
}

func TestUDPSourcePort(t *testing.T) {
	cases := []struct {
		fl, l, r uint32
		want     uint16
	}{
		/* 0 */ {0x00000, 0x11, 0x11, 49441},
		/* 1 */ {0xFFFFF, 0, 0, 0xC000 | (0x3FFF ^ 0x3F)},
		/* 2 */ {0x04000, 5, 6, 0xC001}, // bit 14 folds onto bit 0
		/* 3 */ {0x00001, 5, 6, 0xC001},
		/* 4 */ {0x100001, 5, 6, 0xC001}, // bits above 20 ignored
	}
	for i, c := range cases {
		got := UDPSourcePort(c.fl, c.l, c.r)
		assert.Equal(t, c.want, got, "%d: UDPSourcePort(%#x, %d, %d) = %#x, want %#x", i, c.fl, c.l, c.r, got, c.want)
	}
	for q := uint32(0); q < 5000; q += 7 {
		require.Equal(t, CalcFlowLabel(q*3+1, q), CalcFlowLabel(q, q*3+1), "flow label not symmetric for %d", q)
		for _, p := range []uint16{UDPSourcePort(0, q, q+9), DefaultUDPSourcePort(q)} {
			require.GreaterOrEqual(t, p, uint16(0xC000), "port %#x out of range", p)
		}
	}
	assert.Equal(t, uint32((65535*31+65535)&0xFFFFF), CMFlowLabel(0xFFFF, 0xFFFF), "CMFlowLabel keeps 20 bits")
	assert.Equal(t, uint32(7174), CMFlowLabel(0, 7174))
	assert.Equal(t, uint32(0x14c54), CMFlowLabel(36338, 7174), "rping's connection in the bundled capture")
	assert.Equal(t, uint16(55410), DefaultUDPSourcePort(1), "default ports differ from the capture's GSI and UD QPs")
	assert.Equal(t, uint16(53368), DefaultUDPSourcePort(0x13), "default ports differ from the capture's GSI and UD QPs")
}
