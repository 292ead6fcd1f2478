package capture_test

import (
	"compress/gzip"
	"io"
	"os"
	"testing"

	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/capture"
	"github.com/gorxe/gorxe/netio"
)

// demoFaults is a capture gorxe wrote under fault injection, small enough to keep, which the
// readers of captures (gorxe dump, gorxe trace) are tested on: the demo's nine steps with
// `gorxe demo -faults loss=0.06,dup=0.05,corrupt=0.04,seed=4 -pcap demo-faults.pcapng`, then
// gzip -9n. Its 69 frames hold 8 datagrams fault injection dropped, 4 it corrupted and 2
// copies it added.
const demoFaults = "testdata/demo-faults.pcapng.gz"

// TestDemoFaultsCapture pins what the fault comments of demoFaults say, frame by frame, which
// the tests of its readers count on.
func TestDemoFaultsCapture(t *testing.T) {
	f, err := os.Open(demoFaults)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	r, err := pcapgo.NewNgReader(zr, pcapgo.DefaultNgReaderOptions)
	require.NoError(t, err)
	faults := map[netio.Direction][]int{}
	frames := 0
	for {
		_, _, opts, err := r.ReadPacketDataWithOptions()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		frames++
		if d := capture.Fault(opts.Comments); d != netio.Sent {
			faults[d] = append(faults[d], frames)
		} else {
			assert.Empty(t, opts.Comments, "frame %d", frames)
		}
	}
	assert.Equal(t, 69, frames)
	assert.Equal(t, map[netio.Direction][]int{
		netio.Lost:      {19, 32, 40, 44, 55, 56, 60, 63},
		netio.Corrupt:   {2, 7, 14, 28},
		netio.Duplicate: {50, 69},
	}, faults)
}
