package dump

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// The golden capture: real kernel rxe traffic, and Wireshark's decoding of
// every frame. One copy of them lives with the packet package.
const (
	goldenPcapng = "../packet/testdata/kernel-rxe-rc-uc-ud.pcapng"
	goldenCSV    = "../packet/testdata/kernel-rxe-rc-uc-ud.tshark.csv"
)

func readFile(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(name)
	require.NoError(tb, err)
	return b
}

// goldenFrames returns every frame of the golden capture.
func goldenFrames(tb testing.TB) []Frame {
	tb.Helper()
	r, err := NewReader(bytes.NewReader(readFile(tb, goldenPcapng)))
	require.NoError(tb, err)
	var frames []Frame
	for {
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			return frames
		}
		require.NoError(tb, err)
		frames = append(frames, f)
	}
}
