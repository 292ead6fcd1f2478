package gorxe

import (
	"bytes"
	"io"
	"net/netip"
	"sync/atomic"
	"testing"

	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/capture"
	"github.com/gorxe/gorxe/dump"
	"github.com/gorxe/gorxe/netio"
)

// TestTapCapture runs RC SENDs between two devices, one capturing with a capture.Writer as its
// Config.Tap under fault injection: the capture holds every datagram the device sent (lost ones
// marked in a comment, as many as the tap saw) and received, each decodable with a valid ICRC.
func TestTapCapture(t *testing.T) {
	fab := netio.NewFabric(netio.FabricConfig{})
	defer fab.Close()
	var pcap bytes.Buffer
	w, err := capture.NewWriter(&pcap, capture.Options{Interface: "gorxe_a"})
	require.NoError(t, err)
	var lost, taps atomic.Int64
	da, err := Open(Config{Addr: netip.MustParseAddr("10.0.0.1"), Network: fab.Network(),
		Faults: FaultConfig{Loss: 0.1, Seed: 3},
		Tap: func(dir netio.Direction, m *netio.Message) {
			taps.Add(1)
			if dir == netio.Lost {
				lost.Add(1)
			}
			w.Tap(dir, m)
		}})
	require.NoError(t, err)
	db, err := Open(Config{Addr: netip.MustParseAddr("10.0.0.2"), Network: fab.Network()})
	require.NoError(t, err)
	defer db.Close()
	a, b := newNode(t, da), newNode(t, db)
	qa, qb := a.qp(t, QPTypeRC), b.qp(t, QPTypeRC)
	connectRC(t, qa, b.gid, qb.QPN(), 0, 0, MTU1024)
	connectRC(t, qb, a.gid, qa.QPN(), 0, 0, MTU1024)
	const msgs, size = 20, 2000
	for i := range msgs {
		require.NoError(t, qb.PostRecv([]RecvWR{{ID: uint64(i), SGList: b.sge(i*size, size)}}))
	}
	for i := range msgs {
		require.NoError(t, qa.PostSend([]SendWR{{ID: uint64(i), Opcode: WRSend, Flags: SendSignaled, SGList: a.sge(i*size, size)}}))
	}
	for _, wc := range a.wait(t, msgs) {
		require.Equal(t, WCSuccess, wc.Status)
	}
	require.NoError(t, da.Close())
	require.NoError(t, w.Close())

	r, err := pcapgo.NewNgReader(bytes.NewReader(pcap.Bytes()), pcapgo.DefaultNgReaderOptions)
	require.NoError(t, err)
	dr, err := dump.NewReader(bytes.NewReader(pcap.Bytes()))
	require.NoError(t, err)
	dec := dump.NewDecoder()
	var frames, inbound, marked int64
	for {
		_, _, opts, err := r.ReadPacketDataWithOptions()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		f, err := dr.Next()
		require.NoError(t, err)
		p, err := dec.Decode(f)
		require.NoError(t, err)
		assert.NoError(t, p.ICRCErr, "frame %d", f.Index)
		frames++
		if opts.Flags != nil && opts.Flags.Direction == pcapgo.NgEpbFlagDirectionInbound {
			inbound++
		}
		if len(opts.Comments) > 0 {
			assert.Contains(t, opts.Comments[0], "lost")
			marked++
		}
	}
	assert.Equal(t, taps.Load(), frames, "one frame per tapped datagram")
	assert.Equal(t, lost.Load(), marked, "each lost datagram carries a comment")
	assert.NotZero(t, inbound)
	assert.NotZero(t, marked, "loss 0.1 over this many datagrams drops some (seeded)")
}
