package layers

import (
	"errors"
	"io"
	"os"
	"testing"

	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/require"
)

// The golden capture is real kernel rxe traffic (RC, UC and UD pingpong,
// perftest write/read/send/atomic, rping) on an Ethernet bridge. One copy of
// it lives with the packet package.
const goldenPcapng = "../packet/testdata/kernel-rxe-rc-uc-ud.pcapng"

// captureFrames returns the Ethernet frames of the golden capture.
func captureFrames(tb testing.TB) [][]byte {
	tb.Helper()
	f, err := os.Open(goldenPcapng)
	require.NoError(tb, err)
	defer f.Close()
	r, err := pcapgo.NewNgReader(f, pcapgo.DefaultNgReaderOptions)
	require.NoError(tb, err)
	var frames [][]byte
	for {
		data, _, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(tb, err)
		frames = append(frames, data)
	}
	require.Len(tb, frames, 2540, "capture has %d frames, want 2540", len(frames))
	return frames
}
