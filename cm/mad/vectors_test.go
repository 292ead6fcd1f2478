package mad

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

// Byte-exact vectors for the messages the bundled capture does not contain.
// Each expected buffer is written by hand at the offsets of IBTA volume 1
// chapter 12 as include/rdma/ibta_vol1_c12.h lays them out (byte offsets
// after the 24-byte MAD header; a 24-bit field in the upper three bytes of
// its 32-bit word; narrow fields in the upper bits of their byte). The
// REQ-to-DREP layouts are additionally pinned by the kernel capture in
// capture_test.go.
func TestVectors(t *testing.T) {
	gidA := [16]byte{0xfe, 0x80, 15: 0x01}
	gidB := [16]byte{0xfe, 0x80, 15: 0x02}
	for _, tc := range []struct {
		name   string
		encode func(d []byte) error
		want   func(d []byte)
	}{
		{
			name: "MRA of a REQ, service timeout 24 (CMA_CM_MRA_SETTING)",
			encode: func(d []byte) error {
				return MRA(d).Encode(&MRAFields{LocalCommID: 0x11223344, RemoteCommID: 0x55667788,
					MsgMRAed: MsgTypeREQ, ServiceTimeout: 24, PrivateData: []byte{0xab}})
			},
			want: func(d []byte) {
				binary.BigEndian.PutUint32(d[0:], 0x11223344)
				binary.BigEndian.PutUint32(d[4:], 0x55667788)
				d[8] = 0x00    // MsgMRAed REQ in bits 7:6
				d[9] = 24 << 3 // ServiceTimeout in bits 7:3
				d[10] = 0xab   // private data at 10
			},
		},
		{
			name: "MRA of a REP",
			encode: func(d []byte) error {
				return MRA(d).Encode(&MRAFields{LocalCommID: 1, RemoteCommID: 2, MsgMRAed: MsgTypeREP, ServiceTimeout: 31})
			},
			want: func(d []byte) {
				d[3], d[7] = 1, 2
				d[8], d[9] = 0x40, 0xf8
			},
		},
		{
			name: "REJ of a REQ, invalid service ID, no ARI",
			encode: func(d []byte) error {
				return REJ(d).Encode(&REJFields{RemoteCommID: 0xfeb6ce1c, MsgRejected: MsgTypeREQ,
					Reason: RejInvalidServiceID})
			},
			want: func(d []byte) {
				binary.BigEndian.PutUint32(d[4:], 0xfeb6ce1c)
				d[11] = 8 // reason at 10 (16 bits)
			},
		},
		{
			name: "REJ timeout with the CA GUID as ARI, consumer private data",
			encode: func(d []byte) error {
				return REJ(d).Encode(&REJFields{LocalCommID: 7, RemoteCommID: 9, MsgRejected: MsgTypeREP,
					Reason: RejTimeout, ARI: []byte{1, 2, 3, 4, 5, 6, 7, 8}, PrivateData: []byte{0xde, 0xad}})
			},
			want: func(d []byte) {
				d[3], d[7] = 7, 9
				d[8] = 0x40   // MsgRejected REP
				d[9] = 8 << 1 // RejectedInfoLength in bits 7:1
				d[11] = 4     // timeout
				copy(d[12:], []byte{1, 2, 3, 4, 5, 6, 7, 8})
				d[84], d[85] = 0xde, 0xad // private data at 84
			},
		},
		{
			name: "LAP",
			encode: func(d []byte) error {
				return LAP(d).Encode(&LAPFields{LocalCommID: 0xa, RemoteCommID: 0xb, RemoteQPN: 0x123456,
					RemoteCMResponseTimeout: 20, AlternatePath: PathFields{LocalLID: 0x1111, RemoteLID: 0x2222,
						LocalGID: gidA, RemoteGID: gidB, FlowLabel: 0xabcde, TrafficClass: 0x5a, HopLimit: 0x40,
						PacketRate: 0x3f, SL: 0xf, SubnetLocal: true, LocalAckTimeout: 17},
					PrivateData: []byte{0x77}})
			},
			want: func(d []byte) {
				d[3], d[7] = 0xa, 0xb
				d[12], d[13], d[14] = 0x12, 0x34, 0x56 // remote QPN at 12
				d[15] = 20 << 3
				d[20], d[21], d[22], d[23] = 0x11, 0x11, 0x22, 0x22
				copy(d[24:], gidA[:])
				copy(d[40:], gidB[:])
				d[56], d[57], d[58] = 0xab, 0xcd, 0xe0 // flow label in the upper 20 bits
				d[59] = 0x5a                           // traffic class
				d[60] = 0x40                           // hop limit
				d[61] = 0x3f                           // packet rate, low 6 bits
				d[62] = 0xf8                           // SL 0xf, subnet local
				d[63] = 17 << 3                        // local ACK timeout
				d[64] = 0x77
			},
		},
		{
			name: "APR unsupported",
			encode: func(d []byte) error {
				return APR(d).Encode(&APRFields{LocalCommID: 3, RemoteCommID: 4, Status: APRUnsupported, Info: []byte{9}})
			},
			want: func(d []byte) {
				d[3], d[7] = 3, 4
				d[8], d[9] = 1, 2
				d[12] = 9
			},
		},
		{
			name: "SIDR_REQ in the UDP port space",
			encode: func(d []byte) error {
				return SIDRREQ(d).Encode(&SIDRREQFields{RequestID: 0x01020304, PKey: 0xffff,
					ServiceID: ServiceID(PortSpaceUDP, 7174), PrivateData: []byte{0x00, 0x40}})
			},
			want: func(d []byte) {
				copy(d[0:], []byte{1, 2, 3, 4})
				d[4], d[5] = 0xff, 0xff
				copy(d[8:], []byte{0, 0, 0, 0, 0x01, 0x11, 0x1c, 0x06})
				d[16], d[17] = 0x00, 0x40
			},
		},
		{
			name: "SIDR_REP success with RDMA-CM's UD Q_Key",
			encode: func(d []byte) error {
				return SIDRREP(d).Encode(&SIDRREPFields{RequestID: 0x01020304, Status: SIDRSuccess, QPN: 0x000011,
					ServiceID: ServiceID(PortSpaceUDP, 7174), QKey: UDPQKey, Info: []byte{0xee, 0xff}, PrivateData: []byte{0x42}})
			},
			want: func(d []byte) {
				copy(d[0:], []byte{1, 2, 3, 4})
				d[4], d[5] = 0, 2
				d[10] = 0x11 // QPN at 8, 24 bits
				copy(d[12:], []byte{0, 0, 0, 0, 0x01, 0x11, 0x1c, 0x06})
				copy(d[20:], []byte{0x01, 0x23, 0x45, 0x67})
				d[24], d[25] = 0xee, 0xff
				d[96] = 0x42
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := make([]byte, DataSize)
			for i := range got {
				got[i] = 0xcc // Encode must overwrite stale bytes
			}
			require.NoError(t, tc.encode(got))
			want := make([]byte, DataSize)
			tc.want(want)
			require.Equal(t, want, got)
		})
	}
}

func TestHeaderExactBytes(t *testing.T) {
	m := New(AttrSIDRREP, 0x0102030405060708)
	require.Equal(t, []byte{
		0x01, 0x07, 0x02, 0x03, // base version, CM class, class version 2, Send
		0x00, 0x00, 0x00, 0x00, // status, class specific
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, // TID
		0x00, 0x18, 0x00, 0x00, // attribute ID, reserved
		0x00, 0x00, 0x00, 0x00, // attribute modifier
	}, []byte(m.Header()))
	require.Len(t, m, Size)
}

func TestServiceID(t *testing.T) {
	for _, tc := range []struct {
		ps   PortSpace
		port uint16
		id   uint64
	}{
		{PortSpaceTCP, 7174, 0x0000000001061c06}, // rping
		{PortSpaceTCP, 7471, 0x0000000001061d2f}, // ucmatose
		{PortSpaceUDP, 7174, 0x0000000001111c06}, // udaddy
		{PortSpaceIPoIB, 1, 0x0000000000020001},
		{PortSpaceIB, 0xffff, 0x00000000013fffff},
	} {
		require.Equal(t, tc.id, ServiceID(tc.ps, tc.port))
		ps, port, ok := SplitServiceID(tc.id)
		require.True(t, ok)
		require.Equal(t, tc.ps, ps)
		require.Equal(t, tc.port, port)
	}
	_, _, ok := SplitServiceID(0x0200000000000001)
	require.False(t, ok, "a native IB service ID is not an RDMA-CM one")
}

func TestTimeoutEncoding(t *testing.T) {
	require.Equal(t, "4.096µs", Timeout(0).String())
	require.Equal(t, "67.108864ms", Timeout(14).String())
	require.Equal(t, "4.294967296s", Timeout(20).String()) // CMA_CM_RESPONSE_TIMEOUT
	for _, tc := range []struct{ delay, life, want uint8 }{
		{15, 18, 19}, // rxe (CA ACK delay 15) with 6.1's packet lifetime 18: the capture's REQ
		{15, 16, 17}, // current kernels' lifetime 16
		{15, 14, 16}, // equal exponents double
		{20, 10, 20}, // the ACK delay dominates
		{20, 18, 21},
		{31, 31, 31}, // saturates
	} {
		require.Equal(t, tc.want, AckTimeout(tc.delay, tc.life), "delay %d life %d", tc.delay, tc.life)
	}
}

func TestCMAHeaderIPv6AndErrors(t *testing.T) {
	var h [CMAHeaderSize]byte
	f := CMAHeaderFields{SrcPort: 0x1234, Src: netip.MustParseAddr("fd00::1"), Dst: netip.MustParseAddr("fd00::2")}
	require.NoError(t, CMAHeader(h[:]).Encode(&f))
	require.Equal(t, byte(0x60), h[1])
	require.Equal(t, f, CMAHeader(h[:]).Fields())
	require.ErrorIs(t, CMAHeader(h[:]).Encode(&CMAHeaderFields{Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("fd00::2")}), ErrAddressFamily)
	require.ErrorIs(t, CMAHeader(h[:]).Encode(&CMAHeaderFields{}), ErrAddressFamily)

	// IPv4-mapped input is IPv4 on the wire, with a zero (not ::ffff) pad.
	b, err := AppendCMAPrivateData(nil, &CMAHeaderFields{SrcPort: 1, Src: netip.MustParseAddr("::ffff:10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.2")}, []byte("hi"))
	require.NoError(t, err)
	require.Equal(t, []byte{0, 0x40, 0, 1}, b[:4])
	require.Equal(t, make([]byte, 12), b[4:16])
	require.Equal(t, []byte{10, 0, 0, 1}, b[16:20])
	require.Equal(t, "hi", string(b[CMAHeaderSize:]))

	hf, user, ok := SplitCMAPrivateData(b)
	require.True(t, ok)
	require.Equal(t, "10.0.0.1", hf.Src.String())
	require.Equal(t, "hi", string(user))
	_, _, ok = SplitCMAPrivateData(b[:CMAHeaderSize-1])
	require.False(t, ok)

	bad := CMAHeader(make([]byte, CMAHeaderSize))
	bad[1] = 0x50
	require.False(t, bad.Valid())
	require.False(t, bad.Src().IsValid())
}

func TestNames(t *testing.T) {
	require.Equal(t, "REP", MsgTypeREP.String())
	require.Equal(t, "Other", MsgTypeOther.String())
	require.Equal(t, "MsgType(3)", MsgType(3).String())
	require.Equal(t, "UC", TransportUC.String())
	require.Equal(t, "TransportType(3)", TransportType(3).String())
	require.Equal(t, "service ID not supported", SIDRUnsupported.String())
	require.Equal(t, "SIDRStatus(9)", SIDRStatus(9).String())
	require.Equal(t, "TCP", PortSpaceTCP.String())
	require.Equal(t, "PortSpace(0x1)", PortSpace(1).String())
	for m, bytes := range map[MTU]int{0: 0, MTU256: 256, MTU1024: 1024, MTU4096: 4096, 6: 0} {
		require.Equal(t, bytes, m.Bytes(), "MTU %d", m)
		require.Equal(t, bytes != 0, m.Valid())
	}
}

// TestECEExactBytes pins where Enhanced Connection Establishment travels: the vendor ID in a
// REQ's bytes 5-7 and in the low bytes of a REP's words at 12, 16 and 20 (most significant
// first), the options in the MAD header's attribute modifier, as the kernel's cm_format_req and
// cm_format_rep place them. The neighbouring 24-bit fields are all ones, so a vendor ID written
// one byte off would show. Wireshark 4.0, which has no vendor ID fields, decodes these MADs with
// every field it knows unchanged, the attribute modifier as 0xfedcba98 and the REQ's vendor ID
// inside its "Reserved" word 0x0002c9a1.
func TestECEExactBytes(t *testing.T) {
	const vendor, options = 0x02c9a1, 0xfedcba98 // an OUI-sized vendor ID, every options bit pattern
	hdr := func(attr AttrID) []byte {
		return []byte{
			0x01, 0x07, 0x02, 0x03, // base version, CM class, class version 2, Send
			0x00, 0x00, 0x00, 0x00, // status, class specific
			0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, // TID
			0x00, byte(attr), 0x00, 0x00, // attribute ID, reserved
			0xfe, 0xdc, 0xba, 0x98, // attribute modifier: the ECE options
		}
	}
	for _, tc := range []struct {
		name   string
		attr   AttrID
		encode func(d []byte) error
		want   func(d []byte)
		decode func(d []byte) uint32
	}{
		{
			name: "REQ",
			attr: AttrREQ,
			encode: func(d []byte) error {
				return REQ(d).Encode(&REQFields{LocalCommID: 0xa1b2c3d4, VendorID: vendor, ServiceID: 0x0000000001061c06,
					LocalQPN: 0xffffff, ResponderResources: 0xff, PathMTU: MTU1024})
			},
			want: func(d []byte) {
				copy(d[0:], []byte{0xa1, 0xb2, 0xc3, 0xd4})
				d[4] = 0x00                                         // reserved
				d[5], d[6], d[7] = 0x02, 0xc9, 0xa1                 // vendor ID
				copy(d[8:], []byte{0, 0, 0, 0, 1, 6, 0x1c, 6})      // service ID
				d[32], d[33], d[34], d[35] = 0xff, 0xff, 0xff, 0xff // local QPN, responder resources
				d[50] = byte(MTU1024) << 4
			},
			decode: func(d []byte) uint32 { return REQ(d).VendorID() },
		},
		{
			name: "REP",
			attr: AttrREP,
			encode: func(d []byte) error {
				return REP(d).Encode(&REPFields{LocalCommID: 1, RemoteCommID: 2, LocalQPN: 0xffffff,
					LocalEECN: 0xffffff, StartingPSN: 0xffffff, VendorID: vendor, ResponderResources: 0xff})
			},
			want: func(d []byte) {
				d[3], d[7] = 1, 2
				d[12], d[13], d[14], d[15] = 0xff, 0xff, 0xff, 0x02 // local QPN, vendor ID bits 23:16
				d[16], d[17], d[18], d[19] = 0xff, 0xff, 0xff, 0xc9 // local EECN, bits 15:8
				d[20], d[21], d[22], d[23] = 0xff, 0xff, 0xff, 0xa1 // starting PSN, bits 7:0
				d[24] = 0xff
			},
			decode: func(d []byte) uint32 { return REP(d).VendorID() },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(tc.attr, 0x1122334455667788)
			h := CMHeader(tc.attr, 0x1122334455667788)
			h.AttrMod = options
			m.Header().Encode(&h)
			for i := range m.Data() {
				m.Data()[i] = 0xcc // Encode must overwrite stale bytes
			}
			require.NoError(t, tc.encode(m.Data()))
			want := make([]byte, Size)
			copy(want, hdr(tc.attr))
			tc.want(want[HeaderSize:])
			require.Equal(t, want, []byte(m))
			p, err := Parse(m)
			require.NoError(t, err)
			require.Equal(t, uint32(options), p.Header().AttrMod())
			require.Equal(t, uint32(vendor), tc.decode(p.Data()))
		})
	}
}
