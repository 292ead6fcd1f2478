package layers

import (
	"net"
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/packet"
)

// TestExtLayerTypesFollowTheTable checks that every header of the packet
// package's table has its own registered layer type, named after it, and
// that HeaderOf inverts ExtLayerType.
func TestExtLayerTypesFollowTheTable(t *testing.T) {
	seen := map[gopacket.LayerType]bool{LayerTypeBTH: true}
	for h := range packet.Header(packet.NumHeaders) {
		lt := ExtLayerType(h)
		assert.Equal(t, h.String(), lt.String())
		assert.False(t, seen[lt], "%v registered twice", lt)
		seen[lt] = true
		got, ok := HeaderOf(lt)
		assert.True(t, ok)
		assert.Equal(t, h, got)
		l := NewExt(h)
		assert.Equal(t, lt, l.LayerType())
		assert.Len(t, l.Contents, h.Size())
	}
	assert.Equal(t, gopacket.LayerTypeZero, ExtLayerType(packet.NumHeaders))
	for _, lt := range []gopacket.LayerType{LayerTypeBTH, gopacket.LayerTypePayload, gplayers.LayerTypeUDP, layerTypeBase + 1 + packet.NumHeaders} {
		_, ok := HeaderOf(lt)
		assert.False(t, ok, "%v", lt)
	}
}

func TestExtErrors(t *testing.T) {
	buf := gopacket.NewSerializeBuffer()
	l := NewExt(packet.HeaderRETH)
	l.Contents = l.Contents[:8]
	assert.ErrorIs(t, l.SerializeTo(buf, gopacket.SerializeOptions{}), ErrHeaderSize)

	bad := &Ext{Header: packet.NumHeaders}
	assert.ErrorIs(t, bad.SerializeTo(buf, gopacket.SerializeOptions{}), ErrUnknownHeader)
	assert.ErrorIs(t, bad.DecodeFromBytes(make([]byte, 32), gopacket.NilDecodeFeedback), ErrUnknownHeader)
}

// rocePacket returns an IPv4 frame carrying an RC RDMA WRITE ONLY with
// immediate data on the given UDP destination port.
func rocePacket(t *testing.T, port uint16) []byte {
	t.Helper()
	ip := &gplayers.IPv4{Version: 4, TTL: 64, Protocol: gplayers.IPProtocolUDP, Flags: gplayers.IPv4DontFragment,
		SrcIP: net.IPv4(10, 0, 0, 1).To4(), DstIP: net.IPv4(10, 0, 0, 2).To4()}
	udp := &gplayers.UDP{SrcPort: 0xC001, DstPort: gplayers.UDPPort(port)}
	require.NoError(t, udp.SetNetworkLayerForChecksum(ip))
	bth := &BTH{BTHFields: packet.BTHFields{Opcode: packet.RCRDMAWriteOnlyWithImmediate, PKey: 0xFFFF, DestQP: 0x12, PSN: 5}}
	require.NoError(t, bth.SetNetworkLayerForICRC(ip, udp))
	reth, imm := NewExt(packet.HeaderRETH), NewExt(packet.HeaderImmDt)
	packet.RETH(reth.Contents).Encode(&packet.RETHFields{VirtualAddress: 0x1000, RKey: 0x77, DMALength: 3})
	packet.ImmDt(imm.Contents).Encode(&packet.ImmDtFields{ImmediateData: 0xAABBCCDD})
	buf := gopacket.NewSerializeBuffer()
	require.NoError(t, gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
		ip, udp, bth, reth, imm, gopacket.Payload("abc")))
	return buf.Bytes()
}

var registerTestPort uint16 = 18515

// TestRegisterUDPPort decodes the same packet on an unregistered port, where
// gopacket sees an opaque payload, and after RegisterUDPPort, where it sees
// every RoCE layer and the ICRC verifies.
func TestRegisterUDPPort(t *testing.T) {
	// A registration cannot be undone, so each run of the test (go test -count=N) takes a port of
	// its own, counting up from perftest's control port: none is in gopacket's table.
	port := registerTestPort
	registerTestPort++
	frame := rocePacket(t, port)
	p := gopacket.NewPacket(frame, gplayers.LayerTypeIPv4, gopacket.Default)
	require.Nil(t, p.Layer(LayerTypeBTH), "decoded as RoCE before registration")

	RegisterUDPPort(port)
	p = gopacket.NewPacket(frame, gplayers.LayerTypeIPv4, gopacket.Default)
	require.Nil(t, p.ErrorLayer())
	var got []gopacket.LayerType
	for _, l := range p.Layers() {
		got = append(got, l.LayerType())
	}
	assert.Equal(t, []gopacket.LayerType{gplayers.LayerTypeIPv4, gplayers.LayerTypeUDP, LayerTypeBTH,
		LayerTypeRETH, LayerTypeImmDt, gopacket.LayerTypePayload}, got)
	imm := p.Layer(LayerTypeImmDt).(*Ext)
	assert.Equal(t, uint32(0xAABBCCDD), packet.ImmDt(imm.Contents).ImmediateData())
	assert.NoError(t, VerifyICRC(p.NetworkLayer(), p.Layer(gplayers.LayerTypeUDP).(*gplayers.UDP)))
}
