package dump

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/require"
)

// maxFuzzFrames bounds the frames read from one fuzzed capture (a gzip stream can expand).
const maxFuzzFrames = 1 << 14

// goldenPrefix writes the first n frames of the golden kernel-rxe capture to a pcapng file of
// their own: a real multi-frame capture small enough to mutate quickly.
func goldenPrefix(f *testing.F, n int) []byte {
	frames := goldenFrames(f)[:n]
	var b bytes.Buffer
	intf := pcapgo.DefaultNgInterface
	intf.LinkType = frames[0].LinkType
	w, err := pcapgo.NewNgWriterInterface(&b, intf, pcapgo.DefaultNgWriterOptions)
	require.NoError(f, err)
	for _, fr := range frames {
		require.NoError(f, w.WritePacket(gopacket.CaptureInfo{Timestamp: fr.Time, CaptureLength: len(fr.Data), Length: fr.Length}, fr.Data))
	}
	require.NoError(f, w.Flush())
	return b.Bytes()
}

func gzipped(f *testing.F, b []byte) []byte {
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	_, err := zw.Write(b)
	require.NoError(f, err)
	require.NoError(f, zw.Close())
	return out.Bytes()
}

// readAll reads every frame of a capture the way a reader of the package would, checking that
// frames are numbered 1, 2, ... and that reading ends in io.EOF or a truncation error.
func readAll(t *testing.T, b []byte) (int, error) {
	r, err := NewReader(bytes.NewReader(b))
	if err != nil {
		require.True(t, errors.Is(err, ErrNotCapture) || errors.Is(err, ErrTruncatedCapture), "NewReader: %v", err)
		return 0, err
	}
	n := 0
	for n < maxFuzzFrames {
		fr, err := r.Next()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			require.ErrorIs(t, err, ErrTruncatedCapture)
			return n, err
		}
		n++
		require.Equal(t, n, fr.Index)
	}
	return n, errors.New("too many frames")
}

// FuzzCaptureFile feeds whole capture files (pcapng with the port note, classic pcap, gzip) to
// the reader and to RunOptions in every format: nothing panics, a file is either refused as a
// capture or read frame by frame to its end or its cut, and the dump accounts for every frame
// it read: each is printed (one line, or one JSON object, per RoCEv2 packet), reported as bad,
// counted as other UDP, or skipped as not UDP.
func FuzzCaptureFile(f *testing.F) {
	demo, _ := demoFrames(f)
	ng, pcap := demoPcapng(f, demo), demoPcap(f, demo)
	golden := goldenPrefix(f, 12)
	for _, seed := range [][]byte{ng, pcap, golden, gzipped(f, ng), golden[:len(golden)-7], pcap[:30], nil} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		frames, readErr := readAll(t, b)
		if frames == maxFuzzFrames {
			t.Skip("capture too long to dump here")
		}
		for _, format := range []Format{FormatLine, FormatVerbose, FormatJSON} {
			var out, errOut bytes.Buffer
			st, err := RunOptions(&out, &errOut, bytes.NewReader(b), Options{Format: format, Ports: []uint16{demoPort}})
			if readErr != nil {
				require.Error(t, err, "the reader stopped with %v", readErr)
				require.Equal(t, errors.Is(readErr, ErrNotCapture), errors.Is(err, ErrNotCapture), "reader %v, dump %v", readErr, err)
			} else {
				require.NoError(t, err)
			}
			require.Equal(t, frames, st.Frames)
			require.LessOrEqual(t, st.RoCE+st.Bad+st.OtherUDP, st.Frames, "%+v", st)
			require.LessOrEqual(t, st.BadICRC, st.RoCE, "%+v", st)
			require.Zero(t, st.Filtered)
			switch format {
			case FormatLine:
				require.Equal(t, st.RoCE, strings.Count(out.String(), "\n"), "%+v:\n%s", st, out.String())
			case FormatJSON:
				sc := bufio.NewScanner(&out)
				sc.Buffer(nil, 1<<20)
				n := 0
				for sc.Scan() {
					var rec Record
					require.NoError(t, json.Unmarshal(sc.Bytes(), &rec), "%s", sc.Bytes())
					n++
				}
				require.Equal(t, st.RoCE, n)
			}
		}
	})
}
