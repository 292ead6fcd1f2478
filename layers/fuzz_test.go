package layers

import (
	"bytes"
	"errors"
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/packet"
)

// FuzzDecode feeds arbitrary UDP payloads to the layers, through
// gopacket.NewPacket and through a DecodingLayerParser, with panic recovery
// off. They must accept exactly what packet.Parse accepts, fail with its
// error otherwise, decode the same values, and serialize back to a packet
// that packet.Parse reads the same.
func FuzzDecode(f *testing.F) {
	// One packet of every defined opcode, built by the packet package, with
	// a payload not a multiple of four so the pad is exercised.
	for op := range 256 {
		op := packet.Opcode(op)
		if !op.Valid() {
			continue
		}
		payload := make([]byte, op.FixedPayloadLen())
		if op.HasPayload() && op.FixedPayloadLen() == 0 {
			payload = []byte("pad me")
		}
		b, err := packet.AppendPacket(nil, &packet.Headers{BTH: packet.BTHFields{Opcode: op, PSN: 0xFFFFFF}}, payload)
		require.NoError(f, err)
		f.Add(b)
	}
	// The first capture packet of each opcode the capture holds.
	seen := map[byte]bool{}
	for _, frame := range captureFrames(f) {
		p := gopacket.NewPacket(frame, gplayers.LayerTypeEthernet, gopacket.NoCopy)
		udp := p.Layer(gplayers.LayerTypeUDP).(*gplayers.UDP)
		if !seen[udp.Payload[0]] {
			seen[udp.Payload[0]] = true
			f.Add(bytes.Clone(udp.Payload))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var parsed packet.Parsed
		want := packet.Parse(b, &parsed)

		p := gopacket.NewPacket(b, LayerTypeBTH, gopacket.DecodeOptions{NoCopy: true, SkipDecodeRecovery: true})
		var got error
		if el := p.ErrorLayer(); el != nil {
			got = el.Error()
		}
		require.ErrorIs(t, got, want, "NewPacket: %v, packet.Parse: %v", got, want)
		require.Equal(t, (want == nil), (got == nil), "NewPacket: %v, packet.Parse: %v", got, want)

		roce := NewDecodingLayers()
		parser := gopacket.NewDecodingLayerParser(LayerTypeBTH, roce.Layers()...)
		parser.IgnorePanic = true // let a panic fail the test
		var decoded []gopacket.LayerType
		// A DecodingLayerParser decodes nothing, and reports nothing, for
		// empty input.
		err := parser.DecodeLayers(b, &decoded)
		require.False(t, len(b) > 0 && (!errors.Is(err, want) || (err == nil) != (want == nil)), "DecodingLayerParser: %v, packet.Parse: %v", err, want)
		if want != nil {
			return
		}
		checkAgainstParsed(t, p.Layers(), b)

		buf := gopacket.NewSerializeBuffer()
		require.NoError(t, gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, serializable(t, p.Layers())...), "serialize")
		var again packet.Parsed
		err = packet.Parse(buf.Bytes(), &again)
		require.NoError(t, err, "serialized packet does not parse: %v\n%x", err, buf.Bytes())
		var h1, h2 packet.Headers
		parsed.Headers(&h1)
		again.Headers(&h2)
		require.Equal(t, h2, h1, "round trip changed the packet:\n%x\n%x", b, buf.Bytes())
		require.Equal(t, again.Payload(), parsed.Payload(), "round trip changed the packet:\n%x\n%x", b, buf.Bytes())
		require.Equal(t, again.ICRC(), parsed.ICRC(), "round trip changed the packet:\n%x\n%x", b, buf.Bytes())
		require.Len(t, buf.Bytes(), len(b), "round trip changed the packet:\n%x\n%x", b, buf.Bytes())
	})
}
