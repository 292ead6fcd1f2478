package layers

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/packet"
)

// roceLayers returns the RoCE layers of a decoded packet: the BTH, then the
// extension headers, then the payload layer if the packet carries payload.
func roceLayers(p gopacket.Packet) []gopacket.Layer {
	ls := p.Layers()
	for i, l := range ls {
		if l.LayerType() == LayerTypeBTH {
			return ls[i:]
		}
	}
	return nil
}

// checkAgainstParsed fails unless the RoCE layers ls hold exactly what
// packet.Parse finds in the UDP payload b.
func checkAgainstParsed(t *testing.T, ls []gopacket.Layer, b []byte) {
	t.Helper()
	var p packet.Parsed
	require.NoError(t, packet.Parse(b, &p), "packet.Parse")
	want := []gopacket.LayerType{LayerTypeBTH}
	for h := range p.Opcode().Headers().All() {
		want = append(want, ExtLayerType(h))
	}
	if len(p.Payload()) > 0 {
		want = append(want, gopacket.LayerTypePayload)
	}
	var got []gopacket.LayerType
	for _, l := range ls {
		got = append(got, l.LayerType())
	}
	require.Equal(t, want, got, "layers %v, want %v", got, want)
	for _, l := range ls {
		var gotF, wantF any
		switch l := l.(type) {
		case *BTH:
			gotF, wantF = l.BTHFields, p.BTH().Fields()
			assert.Equal(t, b[len(b)-packet.ICRCSize-p.PadCount():len(b)-packet.ICRCSize], l.Pad, "BTH trailer: pad %x ICRC %#x, want ICRC %#x", l.Pad, l.ICRC, p.ICRC())
			assert.Equal(t, p.ICRC(), l.ICRC, "BTH trailer: pad %x ICRC %#x, want ICRC %#x", l.Pad, l.ICRC, p.ICRC())
		case *Ext:
			gotF, wantF = l.Contents, p.Ext(l.Header)
		case *gopacket.Payload:
			gotF, wantF = []byte(*l), p.Payload()
		default:
			require.Fail(t, fmt.Sprintf("unexpected layer %T", l))
		}
		assert.Equal(t, wantF, gotF, "%v: %+v, want %+v", l.LayerType(), gotF, wantF)
	}
	last := ls[len(ls)-1]
	assert.False(t, !bytes.Equal(last.LayerPayload(), nil) && last.LayerType() != gopacket.LayerTypePayload, "last header %v leaves payload %x undecoded", last.LayerType(), last.LayerPayload())
}

// TestCaptureAgreesWithPacket decodes every frame of the golden capture with
// gopacket.NewPacket and checks the RoCE layers against packet.Parse, and the
// ICRC against the IP and UDP layers.
func TestCaptureAgreesWithPacket(t *testing.T) {
	for i, frame := range captureFrames(t) {
		p := gopacket.NewPacket(frame, gplayers.LayerTypeEthernet, gopacket.NoCopy)
		if el := p.ErrorLayer(); el != nil {
			require.Fail(t, fmt.Sprintf("frame %d: %v", i+1, el.Error()))
		}
		udp := p.Layer(gplayers.LayerTypeUDP).(*gplayers.UDP)
		checkAgainstParsed(t, roceLayers(p), udp.Payload)
		assert.NoError(t, VerifyICRC(p.NetworkLayer(), udp), "frame %d: ICRC", i+1)
		require.False(t, t.Failed(), "frame %d failed", i+1)
	}
}

// TestDecodingLayerParserAgrees runs the whole capture through a
// DecodingLayerParser built from NewDecodingLayers and checks that it finds
// the same layers and values as gopacket.NewPacket.
func TestDecodingLayerParserAgrees(t *testing.T) {
	var (
		eth     gplayers.Ethernet
		ip4     gplayers.IPv4
		udp     gplayers.UDP
		roce    = NewDecodingLayers()
		decoded []gopacket.LayerType
	)
	parser := gopacket.NewDecodingLayerParser(gplayers.LayerTypeEthernet,
		append([]gopacket.DecodingLayer{&eth, &ip4, &udp}, roce.Layers()...)...)
	byType := map[gopacket.LayerType]gopacket.Layer{LayerTypeBTH: &roce.BTH, gopacket.LayerTypePayload: &roce.Payload}
	for h := range roce.Ext {
		byType[roce.Ext[h].LayerType()] = &roce.Ext[h]
	}
	for i, frame := range captureFrames(t) {
		require.NoError(t, parser.DecodeLayers(frame, &decoded), "frame %d", i+1)
		require.GreaterOrEqual(t, len(decoded), 4, "frame %d: decoded %v", i+1, decoded)
		require.Equal(t, []gopacket.LayerType{gplayers.LayerTypeEthernet, gplayers.LayerTypeIPv4, gplayers.LayerTypeUDP, LayerTypeBTH}, decoded[:4], "frame %d: decoded %v", i+1, decoded)
		var ls []gopacket.Layer
		for _, typ := range decoded[3:] {
			ls = append(ls, byType[typ])
		}
		checkAgainstParsed(t, ls, udp.Payload)
		require.NoError(t, VerifyICRC(&ip4, &udp), "frame %d: ICRC", i+1)
	}
}

// serializable returns the layers of p as serializable layers.
func serializable(t *testing.T, ls []gopacket.Layer) []gopacket.SerializableLayer {
	t.Helper()
	var out []gopacket.SerializableLayer
	for _, l := range ls {
		s, ok := l.(gopacket.SerializableLayer)
		require.True(t, ok, "%v is not serializable", l.LayerType())
		out = append(out, s)
	}
	return out
}

// TestSerializeRoundTrip decodes every frame and serializes its layers back:
// as decoded they must reproduce the frame exactly; and the RoCE layers alone,
// with lengths fixed and the ICRC recomputed, must reproduce the UDP payload.
func TestSerializeRoundTrip(t *testing.T) {
	for i, frame := range captureFrames(t) {
		p := gopacket.NewPacket(frame, gplayers.LayerTypeEthernet, gopacket.Default)
		buf := gopacket.NewSerializeBuffer()
		require.NoError(t, gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, serializable(t, p.Layers())...), "frame %d", i+1)
		require.Equal(t, frame, buf.Bytes(), "frame %d: re-serialized\n%x\nwant\n%x", i+1, buf.Bytes(), frame)

		udp := p.Layer(gplayers.LayerTypeUDP).(*gplayers.UDP)
		want := bytes.Clone(udp.Payload)
		ls := roceLayers(p)
		bth := ls[0].(*BTH)
		bth.PadCount, bth.Pad, bth.ICRC = 0, nil, 0
		require.NoError(t, bth.SetNetworkLayerForICRC(p.NetworkLayer(), udp))
		opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
		require.NoError(t, gopacket.SerializeLayers(buf, opts, serializable(t, ls)...), "frame %d", i+1)
		require.Equal(t, want, buf.Bytes(), "frame %d: rebuilt\n%x\nwant\n%x", i+1, buf.Bytes(), want)
	}
}
