package perftest

import (
	"os"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/require"
)

// The golden capture holds the TCP payloads of kernel rxe's out-of-band exchanges, in this order:
// four rdma-core pingpong runs, then ib_write_bw -x 1 -s 65536 -n 50 -F, ib_read_bw with the
// same options, ib_send_bw -x 1 -s 4096 -n 50 -F, ib_atomic_bw -x 1 -n 50 -F and ib_send_lat
// -x 1 -s 64 -n 100 -F, each perftest run on its own connection to port 18515 (perftest 6.06).
const captureFile = "testdata/kernel-rxe-oob-exchanges.pcapng"

// msg is one TCP payload of the capture.
type msg struct {
	fromClient bool
	data       []byte
}

// conversation is one TCP connection's payloads in order.
type conversation struct {
	clientPort uint16
	msgs       []msg
}

// side returns the payloads one side sent.
func (c *conversation) side(client bool) [][]byte {
	var out [][]byte
	for _, m := range c.msgs {
		if m.fromClient == client {
			out = append(out, m.data)
		}
	}
	return out
}

// perftestRuns returns the capture's perftest connections (those that start with a 16-byte
// version message), in order: write_bw, read_bw, send_bw, atomic_bw, send_lat.
func perftestRuns(t testing.TB) []*conversation {
	t.Helper()
	f, err := os.Open(captureFile)
	require.NoError(t, err)
	defer f.Close()
	r, err := pcapgo.NewNgReader(f, pcapgo.DefaultNgReaderOptions)
	require.NoError(t, err)
	var convs []*conversation
	byPort := map[uint16]*conversation{}
	for {
		data, _, err := r.ReadPacketData()
		if err != nil {
			break
		}
		pkt := gopacket.NewPacket(data, r.LinkType(), gopacket.Default)
		tcp, ok := pkt.Layer(layers.LayerTypeTCP).(*layers.TCP)
		if !ok || len(tcp.Payload) == 0 {
			continue
		}
		fromClient := tcp.DstPort == DefaultPort
		port := uint16(tcp.SrcPort)
		if !fromClient {
			port = uint16(tcp.DstPort)
		}
		c := byPort[port]
		if c == nil {
			c = &conversation{clientPort: port}
			byPort[port] = c
			convs = append(convs, c)
		}
		c.msgs = append(c.msgs, msg{fromClient, append([]byte(nil), tcp.Payload...)})
	}
	var runs []*conversation
	for _, c := range convs {
		if len(c.msgs[0].data) == VersionLen {
			runs = append(runs, c)
		}
	}
	require.Len(t, runs, 5, "found %d perftest connections in the capture, want 5", len(runs))
	return runs
}
