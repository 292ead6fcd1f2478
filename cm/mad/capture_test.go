package mad

import (
	"encoding/binary"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// The capture packet/testdata/kernel-rxe-rc-uc-ud.pcapng holds real kernel
// rxe traffic between two Debian 6.1 guests (10.99.0.3 client, 10.99.0.2
// server); its rping run begins with RDMA-CM over QP1. Frames 2411–2413 are
// the REQ, REP and RTU of rping's connection, 2534–2535 its DREQ and DREP,
// and 2536–2540 a second REQ retransmitted five times to a server that had
// exited. Each frame is Ethernet / IPv4 (no options) / UDP / BTH / DETH /
// 256-byte MAD / ICRC.
const capturePath = "../../packet/testdata/kernel-rxe-rc-uc-ud.pcapng"

const madOffsetInFrame = 14 + 20 + 8 + 12 + 8

// captureMAD returns the MAD carried by one frame (1-based, as Wireshark
// numbers them) of the bundled capture.
func captureMAD(t *testing.T, frame int) []byte {
	t.Helper()
	return pcapngMAD(t, capturePath, frame)
}

// pcapngMAD returns the MAD carried by one frame (1-based) of a little-endian pcapng capture of
// Ethernet / IPv4 / UDP / BTH / DETH / MAD frames.
func pcapngMAD(t *testing.T, path string, frame int) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	n := 0
	for len(data) >= 12 {
		// Every block of a little-endian pcapng: type, total length, body.
		typ := binary.LittleEndian.Uint32(data)
		size := int(binary.LittleEndian.Uint32(data[4:]))
		require.GreaterOrEqual(t, size, 12)
		require.LessOrEqual(t, size, len(data))
		if typ == 6 { // enhanced packet block: captured length at 20, packet at 28
			n++
			if n == frame {
				capLen := int(binary.LittleEndian.Uint32(data[20:]))
				pkt := data[28 : 28+capLen]
				require.GreaterOrEqual(t, len(pkt), madOffsetInFrame+Size)
				return pkt[madOffsetInFrame : madOffsetInFrame+Size]
			}
		}
		data = data[size:]
	}
	require.Failf(t, "frame not in the capture", "frame %d", frame)
	return nil
}

// The communication IDs and CA GUIDs of the rping connection in the capture.
const (
	capClientID   = 0xfeb6ce1c
	capServerID   = 0x8f4b6254
	capClientGUID = 0x505400fffe000003
	capServerGUID = 0x505400fffe000002
	capTID        = 0x000000021cceb6fe
	capClientQPN  = 0x29
	capServerQPN  = 0x29
)

var (
	capClientGID = [16]byte{10: 0xff, 11: 0xff, 12: 10, 13: 99, 14: 0, 15: 3}
	capServerGID = [16]byte{10: 0xff, 11: 0xff, 12: 10, 13: 99, 14: 0, 15: 2}
)

// capREQ is frame 2411 decoded by hand from the layout of IBTA Table 106
// (include/rdma/ibta_vol1_c12.h offsets): what the kernel's cm_format_req
// sends for rping's rdma_connect on RoCE.
func capREQ() REQFields {
	return REQFields{
		LocalCommID:             capClientID,
		ServiceID:               0x0000000001061c06, // TCP port space, port 7174
		LocalCAGUID:             capClientGUID,
		LocalQPN:                capClientQPN,
		ResponderResources:      1,
		InitiatorDepth:          1,
		RemoteCMResponseTimeout: 20, // CMA_CM_RESPONSE_TIMEOUT
		TransportType:           TransportRC,
		StartingPSN:             0x99c403,
		LocalCMResponseTimeout:  20,
		RetryCount:              7,
		PKey:                    0xffff,
		PathMTU:                 MTU1024,
		RNRRetryCount:           7,
		MaxCMRetries:            15, // CMA_MAX_CM_RETRIES
		PrimaryPath: PathFields{
			LocalLID:        PermissiveLID,
			RemoteLID:       PermissiveLID,
			LocalGID:        capClientGID,
			RemoteGID:       capServerGID,
			FlowLabel:       0x14c54,
			HopLimit:        64,
			LocalAckTimeout: 19, // AckTimeout(15, 18): rxe's CA ACK delay, 6.1's packet lifetime
		},
		PrivateData: []byte{
			0x00, 0x40, 0x8d, 0xf2, // CMA version 0, IPv4, source port 36338
			0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 99, 0, 3,
			0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 99, 0, 2,
		},
	}
}

func TestCaptureREQ(t *testing.T) {
	b := captureMAD(t, 2411)
	m, err := Parse(b)
	require.NoError(t, err)
	require.Equal(t, CMHeader(AttrREQ, capTID), m.Header().Fields())

	want := capREQ()
	got := REQ(m.Data()).Fields()
	require.Equal(t, want.PrivateData, got.PrivateData[:CMAHeaderSize])
	require.Equal(t, make([]byte, REQPrivateDataSize-CMAHeaderSize), got.PrivateData[CMAHeaderSize:])
	got.PrivateData = want.PrivateData
	require.Equal(t, want, got)

	// The private data starts with the RDMA-CM header.
	h := CMAHeader(REQ(m.Data()).PrivateData())
	require.True(t, h.Valid())
	require.Equal(t, uint8(4), h.IPVersion())
	require.Equal(t, "10.99.0.3", h.Src().String())
	require.Equal(t, "10.99.0.2", h.Dst().String())
	require.Equal(t, uint16(36338), h.SrcPort())
	ps, port, ok := SplitServiceID(got.ServiceID)
	require.True(t, ok)
	require.Equal(t, PortSpaceTCP, ps)
	require.Equal(t, uint16(7174), port) // rping's default port

	// Encoding the decoded values reproduces the frame byte for byte.
	enc := New(AttrREQ, capTID)
	require.NoError(t, REQ(enc.Data()).Encode(&want))
	require.Equal(t, b, []byte(enc))
}

func TestCaptureREQRetransmittedVerbatim(t *testing.T) {
	first := captureMAD(t, 2536)
	m, err := Parse(first)
	require.NoError(t, err)
	require.Equal(t, AttrREQ, m.Header().AttrID())
	require.Equal(t, uint64(capTID+1), m.Header().TID(), "the next connection's TID")
	for f := 2537; f <= 2540; f++ {
		require.Equal(t, first, captureMAD(t, f), "frame %d", f)
	}
}

func TestCaptureREP(t *testing.T) {
	b := captureMAD(t, 2412)
	m, err := Parse(b)
	require.NoError(t, err)
	require.Equal(t, CMHeader(AttrREP, capTID), m.Header().Fields(), "a REP echoes the REQ's TID")
	want := REPFields{
		LocalCommID:        capServerID,
		RemoteCommID:       capClientID,
		LocalQPN:           capServerQPN,
		StartingPSN:        0x8a4ed1,
		ResponderResources: 1,
		InitiatorDepth:     1,
		TargetAckDelay:     15, // rxe's local_ca_ack_delay
		RNRRetryCount:      7,
		LocalCAGUID:        capServerGUID,
	}
	got := REP(m.Data()).Fields()
	require.Equal(t, make([]byte, REPPrivateDataSize), got.PrivateData)
	got.PrivateData = nil
	require.Equal(t, want, got)
	enc := New(AttrREP, capTID)
	require.NoError(t, REP(enc.Data()).Encode(&want))
	require.Equal(t, b, []byte(enc))
}

func TestCaptureRTUDREQDREP(t *testing.T) {
	for _, tc := range []struct {
		name   string
		frame  int
		attr   AttrID
		encode func(d []byte) error
	}{
		{"RTU", 2413, AttrRTU, func(d []byte) error {
			return RTU(d).Encode(&RTUFields{LocalCommID: capClientID, RemoteCommID: capServerID})
		}},
		{"DREQ", 2534, AttrDREQ, func(d []byte) error {
			return DREQ(d).Encode(&DREQFields{LocalCommID: capClientID, RemoteCommID: capServerID, RemoteQPN: capServerQPN})
		}},
		{"DREP", 2535, AttrDREP, func(d []byte) error {
			return DREP(d).Encode(&DREPFields{LocalCommID: capServerID, RemoteCommID: capClientID})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := captureMAD(t, tc.frame)
			m, err := Parse(b)
			require.NoError(t, err)
			// The kernel forms one TID per connection end and uses it for
			// everything that end originates; the DREP echoes the DREQ's.
			require.Equal(t, CMHeader(tc.attr, capTID), m.Header().Fields())
			enc := New(tc.attr, capTID)
			require.NoError(t, tc.encode(enc.Data()))
			require.Equal(t, b, []byte(enc))
		})
	}
	d := DREQ(mustParse(t, captureMAD(t, 2534)).Data())
	require.Equal(t, uint32(capServerQPN), d.RemoteQPN())
}

func mustParse(t *testing.T, b []byte) MAD {
	t.Helper()
	m, err := Parse(b)
	require.NoError(t, err)
	return m
}
