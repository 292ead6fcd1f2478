package layers

import (
	"errors"
	"io"
	"os"
	"testing"

	"github.com/gopacket/gopacket/pcapgo"
)

// The golden capture is real kernel rxe traffic (RC, UC and UD pingpong,
// perftest write/read/send/atomic, rping) on an Ethernet bridge. One copy of
// it lives with the packet package.
const goldenPcapng = "../packet/testdata/kernel-rxe-rc-uc-ud.pcapng"

// captureFrames returns the Ethernet frames of the golden capture.
func captureFrames(tb testing.TB) [][]byte {
	tb.Helper()
	f, err := os.Open(goldenPcapng)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewNgReader(f, pcapgo.DefaultNgReaderOptions)
	if err != nil {
		tb.Fatal(err)
	}
	var frames [][]byte
	for {
		data, _, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
		frames = append(frames, data)
	}
	if len(frames) != 2540 {
		tb.Fatalf("capture has %d frames, want 2540", len(frames))
	}
	return frames
}
