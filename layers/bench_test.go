package layers

import (
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
)

// decodeSetup returns a DecodingLayerParser for Ethernet/IPv4/UDP/RoCE and a
// 1 KiB RC_SEND_FIRST frame from the capture.
func decodeSetup(tb testing.TB) (*gopacket.DecodingLayerParser, []byte) {
	var (
		eth gplayers.Ethernet
		ip4 gplayers.IPv4
		udp gplayers.UDP
	)
	parser := gopacket.NewDecodingLayerParser(gplayers.LayerTypeEthernet,
		append([]gopacket.DecodingLayer{&eth, &ip4, &udp}, NewDecodingLayers().Layers()...)...)
	return parser, captureFrames(tb)[0]
}

// TestDecodingLayerParserAllocs asserts the DecodingLayer path allocates
// nothing per packet, as gopacket promises for DecodeFromBytes.
func TestDecodingLayerParserAllocs(t *testing.T) {
	parser, frame := decodeSetup(t)
	decoded := make([]gopacket.LayerType, 0, 8)
	n := testing.AllocsPerRun(100, func() {
		if err := parser.DecodeLayers(frame, &decoded); err != nil {
			t.Fatal(err)
		}
	})
	assert.Equal(t, float64(0), n, "%v allocations per packet, want 0", n)
}

func BenchmarkDecodingLayerParser(b *testing.B) {
	parser, frame := decodeSetup(b)
	decoded := make([]gopacket.LayerType, 0, 8)
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		if err := parser.DecodeLayers(frame, &decoded); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNewPacket(b *testing.B) {
	frame := captureFrames(b)[0]
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		p := gopacket.NewPacket(frame, gplayers.LayerTypeEthernet, gopacket.NoCopy)
		if p.ErrorLayer() != nil {
			b.Fatal(p.ErrorLayer().Error())
		}
	}
}
