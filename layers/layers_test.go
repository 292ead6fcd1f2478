package layers

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"reflect"
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/packet"
)

// TestDecodeFetchAdd checks one capture frame against the values Wireshark
// shows for it (frame 1911 of the golden capture, ib_atomic_bw):
//
//	IPv4 10.99.0.3 -> 10.99.0.2, UDP 50673 -> 4791, length 52
//	BTH: opcode 20 (RC Fetch Add), P_Key 65535, DestQP 0x000027, AckReq 1, PSN 8659749
//	AtomicETH: VA 0x0000558878eae000, R_Key 0x000009de, Swap/Add 1, Compare 0
//	ICRC 0xff3cb725
func TestDecodeFetchAdd(t *testing.T) {
	frame := captureFrames(t)[1910]
	p := gopacket.NewPacket(frame, gplayers.LayerTypeEthernet, gopacket.Default)
	ls := roceLayers(p)
	require.Len(t, ls, 2, "RoCE layers %v, want BTH and AtomicETH", ls)
	bth, aeth := ls[0].(*BTH), ls[1].(*Ext)
	wantBTH := packet.BTHFields{Opcode: packet.RCFetchAdd, PKey: 0xFFFF, DestQP: 0x27, AckReq: true, PSN: 8659749}
	assert.Equal(t, wantBTH, bth.BTHFields, "BTH %+v ICRC %#x pad %x, want %+v ICRC 0x25b73cff", bth.BTHFields, bth.ICRC, bth.Pad, wantBTH)
	assert.Equal(t, uint32(0x25b73cff), bth.ICRC, "BTH %+v ICRC %#x pad %x, want %+v ICRC 0x25b73cff", bth.BTHFields, bth.ICRC, bth.Pad, wantBTH)
	assert.Len(t, bth.Pad, 0, "BTH %+v ICRC %#x pad %x, want %+v ICRC 0x25b73cff", bth.BTHFields, bth.ICRC, bth.Pad, wantBTH)
	wantAtomic := packet.AtomicETHFields{VirtualAddress: 0x0000558878eae000, RKey: 0x9de, SwapAddData: 1}
	got := packet.AtomicETH(aeth.Contents).Fields()
	assert.Equal(t, LayerTypeAtomicETH, aeth.LayerType(), "%v %+v, want AtomicETH %+v", aeth.LayerType(), got, wantAtomic)
	assert.Equal(t, wantAtomic, got, "%v %+v, want AtomicETH %+v", aeth.LayerType(), got, wantAtomic)
	assert.Equal(t, gopacket.LayerTypePayload, aeth.NextLayerType(), "AtomicETH next %v payload %x, want empty payload", aeth.NextLayerType(), aeth.Payload)
	assert.Len(t, aeth.Payload, 0, "AtomicETH next %v payload %x, want empty payload", aeth.NextLayerType(), aeth.Payload)
}

func TestLayerTypes(t *testing.T) {
	tests := []struct {
		l    gopacket.DecodingLayer
		want gopacket.LayerType
		name string
	}{
		{&BTH{}, LayerTypeBTH, "BTH"},
		{&Ext{Header: packet.HeaderRDETH}, LayerTypeRDETH, "RDETH"},
		{&Ext{Header: packet.HeaderDETH}, LayerTypeDETH, "DETH"},
		{&Ext{Header: packet.HeaderFETH}, LayerTypeFETH, "FETH"},
		{&Ext{Header: packet.HeaderRETH}, LayerTypeRETH, "RETH"},
		{&Ext{Header: packet.HeaderAtomicETH}, LayerTypeAtomicETH, "AtomicETH"},
		{&Ext{Header: packet.HeaderAETH}, LayerTypeAETH, "AETH"},
		{&Ext{Header: packet.HeaderAtomicAckETH}, LayerTypeAtomicAckETH, "AtomicAckETH"},
		{&Ext{Header: packet.HeaderImmDt}, LayerTypeImmDt, "ImmDt"},
		{&Ext{Header: packet.HeaderIETH}, LayerTypeIETH, "IETH"},
	}
	for _, tt := range tests {
		if tt.l.CanDecode() != tt.want || tt.l.(gopacket.Layer).LayerType() != tt.want || tt.want.String() != tt.name {
			assert.Fail(t, fmt.Sprintf("%T: CanDecode %v LayerType %v name %q, want %v %q", tt.l, tt.l.CanDecode(), tt.l.(gopacket.Layer).LayerType(), tt.want.String(), tt.want, tt.name))
		}
	}
	var udp gplayers.UDP
	udp.DstPort = packet.UDPPort
	assert.Equal(t, LayerTypeBTH, udp.NextLayerType(), "UDP to port %d decodes as %v, want BTH", packet.UDPPort, udp.NextLayerType())
}

// TestNextLayerChain checks that each opcode's headers chain in wire order,
// through NewPacket's decoders and through linked DecodingLayers alike.
func TestNextLayerChain(t *testing.T) {
	for op := range 256 {
		op := packet.Opcode(op)
		if !op.Valid() {
			continue
		}
		payload := make([]byte, op.FixedPayloadLen())
		if op.HasPayload() && op.FixedPayloadLen() == 0 {
			payload = []byte{1, 2, 3, 4, 5}
		}
		b, err := packet.AppendPacket(nil, &packet.Headers{BTH: packet.BTHFields{Opcode: op}}, payload)
		require.NoError(t, err, "%v", op)
		want := []gopacket.LayerType{LayerTypeBTH}
		for h := range op.Headers().All() {
			want = append(want, ExtLayerType(h))
		}
		if len(payload) > 0 {
			want = append(want, gopacket.LayerTypePayload)
		}

		p := gopacket.NewPacket(b, LayerTypeBTH, gopacket.Default)
		var got []gopacket.LayerType
		for _, l := range p.Layers() {
			got = append(got, l.LayerType())
		}
		assert.False(t, !reflect.DeepEqual(got, want) || p.ErrorLayer() != nil, "%v: NewPacket layers %v, want %v", op, got, want)

		roce := NewDecodingLayers()
		parser := gopacket.NewDecodingLayerParser(LayerTypeBTH, roce.Layers()...)
		got = nil
		if err := parser.DecodeLayers(b, &got); err != nil || !reflect.DeepEqual(got, want) {
			assert.Fail(t, fmt.Sprintf("%v: parser layers %v (%v), want %v", op, got, err, want))
		}
	}
}

// TestUnlinkedExtension decodes an extension header without a BTH: it cannot
// know the opcode, so what follows it is payload.
func TestUnlinkedExtension(t *testing.T) {
	r := Ext{Header: packet.HeaderRETH}
	data := []byte{0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0x12, 0x34, 0, 0, 0, 8, 0xAA, 0xBB, 0xCC, 0xDD}
	require.NoError(t, r.DecodeFromBytes(data, gopacket.NilDecodeFeedback))
	want := packet.RETHFields{VirtualAddress: 0x1000, RKey: 0x1234, DMALength: 8}
	assert.False(t, packet.RETH(r.Contents).Fields() != want || r.NextLayerType() != gopacket.LayerTypePayload || !bytes.Equal(r.Payload, data[16:]), "RETH % x next %v payload %x", r.Contents, r.NextLayerType(), r.Payload)
	err := r.DecodeFromBytes(data[:15], gopacket.NilDecodeFeedback)
	assert.ErrorIs(t, err, packet.ErrTruncated, "short RETH: %v, want ErrTruncated", err)
	assert.Equal(t, packet.HeaderRETH, r.Header, "failed decode left %+v", r)
	assert.Nil(t, r.Contents, "failed decode left %+v", r)
	assert.Nil(t, r.Payload, "failed decode left %+v", r)
}

// TestDecodeErrors checks that bad packets fail with packet's sentinels and
// that truncation is reported to the parser.
func TestDecodeErrors(t *testing.T) {
	good, err := packet.AppendPacket(nil, &packet.Headers{BTH: packet.BTHFields{Opcode: packet.RCRDMAWriteOnly}}, []byte{1, 2, 3, 4})
	require.NoError(t, err)
	badPad, err := packet.AppendPacket(nil, &packet.Headers{BTH: packet.BTHFields{Opcode: packet.RCRDMAWriteOnly}}, nil)
	require.NoError(t, err)
	packet.BTH(badPad).SetPadCount(1) // more pad than payload
	badOp := bytes.Clone(good)
	badOp[0] = 0x1F
	tests := []struct {
		name      string
		b         []byte
		want      error
		truncated bool
	}{
		{"empty", nil, packet.ErrTruncated, true},
		{"no ICRC", good[:packet.BTHSize+packet.RETHSize], packet.ErrTruncated, true},
		{"header cut", good[:20], packet.ErrTruncated, true},
		{"bad pad", badPad, packet.ErrBadPad, false},
		{"unknown opcode", badOp, packet.ErrUnknownOpcode, false},
	}
	for _, tt := range tests {
		var bth BTH
		parser := gopacket.NewDecodingLayerParser(LayerTypeBTH, &bth)
		var decoded []gopacket.LayerType
		err := parser.DecodeLayers(tt.b, &decoded)
		if tt.b == nil {
			err = bth.DecodeFromBytes(tt.b, parser)
		}
		assert.ErrorIs(t, err, tt.want, "%s: %v, want %v", tt.name, err, tt.want)
		var p packet.Parsed
		perr := packet.Parse(tt.b, &p)
		assert.ErrorIs(t, perr, tt.want, "%s: packet.Parse says %v", tt.name, perr)
		assert.False(t, tt.truncated && !parser.Truncated, "%s: truncation not reported", tt.name)
	}
}

// TestSerializeIPv6 builds a UD SEND over IPv6 from layers with FixLengths and
// ComputeChecksums and checks it byte for byte against the packet package's
// own builder, then that it decodes and verifies.
func TestSerializeIPv6(t *testing.T) {
	src, dst := net.ParseIP("fd00::1"), net.ParseIP("fd00::2")
	ip6 := &gplayers.IPv6{Version: 6, NextHeader: gplayers.IPProtocolUDP, HopLimit: 64, SrcIP: src, DstIP: dst}
	udp := &gplayers.UDP{SrcPort: 0xC123, DstPort: packet.UDPPort}
	bth := &BTH{BTHFields: packet.BTHFields{Opcode: packet.UDSendOnlyWithImmediate, PKey: 0xFFFF, DestQP: 0x11, PSN: 77}}
	dethF := packet.DETHFields{QKey: 0x11111111, SrcQP: 0x22}
	immF := packet.ImmDtFields{ImmediateData: 0xCAFEF00D}
	deth, imm := NewExt(packet.HeaderDETH), NewExt(packet.HeaderImmDt)
	packet.DETH(deth.Contents).Encode(&dethF)
	packet.ImmDt(imm.Contents).Encode(&immF)
	payload := gopacket.Payload("hello")
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}

	if err := gopacket.SerializeLayers(buf, opts, udp, bth, deth, imm, payload); !errors.Is(err, ErrNoNetworkLayer) {
		require.Fail(t, fmt.Sprintf("ICRC without network layer: %v, want ErrNoNetworkLayer", err))
	}
	require.NoError(t, udp.SetNetworkLayerForChecksum(ip6))
	require.NoError(t, bth.SetNetworkLayerForICRC(ip6, udp))
	require.NoError(t, gopacket.SerializeLayers(buf, opts, ip6, udp, bth, deth, imm, payload))
	assert.Equal(t, uint8(3), bth.PadCount, "PadCount %d, want 3", bth.PadCount)

	h := packet.Headers{BTH: bth.BTHFields, DETH: dethF, ImmDt: immF}
	want, err := packet.AppendPacket(nil, &h, payload)
	require.NoError(t, err)
	env, err := Envelope(ip6, udp)
	require.NoError(t, err)
	require.NoError(t, env.PutICRC(want))
	got := buf.Bytes()[packet.IPv6HeaderSize+packet.UDPHeaderSize:]
	require.Equal(t, want, got, "serialized\n%x\nwant\n%x", got, want)

	p := gopacket.NewPacket(buf.Bytes(), gplayers.LayerTypeIPv6, gopacket.Default)
	assert.NoError(t, VerifyICRC(p.NetworkLayer(), p.Layer(gplayers.LayerTypeUDP).(*gplayers.UDP)), "ICRC of serialized packet")
	got[len(got)-1] ^= 1
	p = gopacket.NewPacket(buf.Bytes(), gplayers.LayerTypeIPv6, gopacket.Default)
	if err := VerifyICRC(p.NetworkLayer(), p.Layer(gplayers.LayerTypeUDP).(*gplayers.UDP)); !errors.Is(err, packet.ErrBadICRC) {
		assert.Fail(t, fmt.Sprintf("corrupted ICRC: %v, want ErrBadICRC", err))
	}
}

func TestSerializeErrors(t *testing.T) {
	buf := gopacket.NewSerializeBuffer()
	bth := &BTH{BTHFields: packet.BTHFields{Opcode: packet.RCRDMAWriteFirst}}
	err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, bth)
	assert.ErrorIs(t, err, ErrMissingHeaders, "BTH without its RETH: %v, want ErrMissingHeaders", err)
	bth.Opcode = 0x1F
	err = gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, bth)
	assert.ErrorIs(t, err, packet.ErrUnknownOpcode, "undefined opcode: %v, want ErrUnknownOpcode", err)
	err = bth.SetNetworkLayerForICRC(nil, nil)
	assert.ErrorIs(t, err, ErrNoNetworkLayer, "SetNetworkLayerForICRC(nil): %v", err)
}
