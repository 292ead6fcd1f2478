package packet

import (
	"encoding/binary"
	"encoding/csv"
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// The golden capture is real kernel rxe traffic (RC, UC and UD pingpong,
// perftest write/read/send/atomic, rping) recorded on an Ethernet bridge, and
// the CSV is Wireshark's decoding of every frame of it.
const (
	goldenPcapng = "testdata/kernel-rxe-rc-uc-ud.pcapng"
	goldenCSV    = "testdata/kernel-rxe-rc-uc-ud.tshark.csv"
)

// pcapng block types and the link types the reader understands.
const (
	pcapngSHB      = 0x0A0D0D0A
	pcapngIDB      = 0x00000001
	pcapngEPB      = 0x00000006
	pcapngMagic    = 0x1A2B3C4D
	linkEthernet   = 1
	etherTypeIPv4  = 0x0800
	etherTypeIPv6  = 0x86DD
	etherTypeVLAN  = 0x8100
	ethHeaderSize  = 14
	vlanHeaderSize = 4
)

// frame is one captured packet with its link type.
type frame struct {
	linkType uint16
	data     []byte
}

// readPcapng returns the packets of a pcapng file: section header, interface
// description (for the link type) and enhanced packet blocks, which is all a
// dumpcap capture contains. Other block types are skipped.
func readPcapng(data []byte) ([]frame, error) {
	var (
		order     binary.ByteOrder = binary.LittleEndian
		linkTypes []uint16
		frames    []frame
	)
	for len(data) > 0 {
		if len(data) < 12 {
			return nil, errors.New("pcapng: truncated block header")
		}
		if binary.LittleEndian.Uint32(data) == pcapngSHB {
			switch {
			case binary.LittleEndian.Uint32(data[8:]) == pcapngMagic:
				order = binary.LittleEndian
			case binary.BigEndian.Uint32(data[8:]) == pcapngMagic:
				order = binary.BigEndian
			default:
				return nil, errors.New("pcapng: bad byte-order magic")
			}
			linkTypes = linkTypes[:0] // interface ids are per section
		}
		typ, n := order.Uint32(data), int(order.Uint32(data[4:]))
		if n < 12 || n%4 != 0 || n > len(data) {
			return nil, errors.New("pcapng: bad block length")
		}
		body := data[8 : n-4]
		switch typ {
		case pcapngIDB:
			if len(body) < 8 {
				return nil, errors.New("pcapng: short interface block")
			}
			linkTypes = append(linkTypes, order.Uint16(body))
		case pcapngEPB:
			if len(body) < 20 {
				return nil, errors.New("pcapng: short packet block")
			}
			ifc, capLen := int(order.Uint32(body)), int(order.Uint32(body[12:]))
			if ifc >= len(linkTypes) || 20+capLen > len(body) {
				return nil, errors.New("pcapng: bad packet block")
			}
			frames = append(frames, frame{linkTypes[ifc], body[20 : 20+capLen]})
		}
		data = data[n:]
	}
	return frames, nil
}

// etherPayload returns the IP packet inside an Ethernet frame.
func etherPayload(f frame) ([]byte, error) {
	if f.linkType != linkEthernet {
		return nil, errors.New("unsupported link type")
	}
	b := f.data
	if len(b) < ethHeaderSize {
		return nil, ErrTruncated
	}
	et, b := binary.BigEndian.Uint16(b[12:]), b[ethHeaderSize:]
	for et == etherTypeVLAN {
		if len(b) < vlanHeaderSize {
			return nil, ErrTruncated
		}
		et, b = binary.BigEndian.Uint16(b[2:]), b[vlanHeaderSize:]
	}
	if et != etherTypeIPv4 && et != etherTypeIPv6 {
		return nil, errors.New("not IP")
	}
	return b, nil
}

// goldenPacket is one RoCE packet of the capture with Wireshark's decoding.
type goldenPacket struct {
	frame int
	env   Envelope
	pkt   []byte            // UDP payload: BTH to ICRC
	want  map[string]string // CSV column -> Wireshark's value
}

var loadGolden = sync.OnceValues(func() ([]goldenPacket, error) {
	raw, err := os.ReadFile(goldenPcapng)
	if err != nil {
		return nil, err
	}
	frames, err := readPcapng(raw)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(goldenCSV)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows)-1 != len(frames) {
		return nil, errors.New("CSV rows and capture frames differ in number")
	}
	out := make([]goldenPacket, len(frames))
	for i, fr := range frames {
		ip, err := etherPayload(fr)
		if err != nil {
			return nil, err
		}
		env, pkt, err := ParseEnvelope(ip)
		if err != nil {
			return nil, err
		}
		want := make(map[string]string, len(rows[0]))
		for c, name := range rows[0] {
			want[name] = rows[i+1][c]
		}
		out[i] = goldenPacket{frame: i + 1, env: env, pkt: pkt, want: want}
	}
	return out, nil
})

func golden(t testing.TB) []goldenPacket {
	t.Helper()
	g, err := loadGolden()
	require.NoError(t, err, "loading golden capture")
	require.NotEqual(t, 0, len(g), "golden capture is empty")
	return g
}

func readFile(name string) ([]byte, error) { return os.ReadFile(name) }
