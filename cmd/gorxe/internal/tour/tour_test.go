package tour

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/dump"
)

// goldenPcapng is the capture of real kernel rxe traffic the tour's frames come from; it lives
// with the packet package.
const goldenPcapng = "../../../../packet/testdata/kernel-rxe-rc-uc-ud.pcapng"

var updateTour = flag.Bool("update-tour", false, "rewrite testdata/tour.golden from the current output")

// TestTourGolden pins the whole tour, narration and dumps, byte for byte.
func TestTourGolden(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, Write(&b))
	out := b.String()
	const path = "testdata/tour.golden"
	if *updateTour {
		require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(want), out, "rerun with -update-tour if the change is intended")
}

// TestTourSkips checks every stop against the full capture: the stop is the
// frame it claims to be, and the packets it says were skipped before it are
// exactly the capture's frames in between, counted by opcode.
func TestTourSkips(t *testing.T) {
	golden, err := os.ReadFile(goldenPcapng)
	require.NoError(t, err)
	r, err := dump.NewReader(bytes.NewReader(golden))
	require.NoError(t, err)
	d := dump.NewDecoder()
	var opcodes []string // by frame, from 0
	var frames [][]byte
	for {
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		p, err := d.Decode(f)
		require.NoError(t, err)
		opcodes = append(opcodes, p.BTH.Opcode.String())
		frames = append(frames, bytes.Clone(f.Data))
	}
	tr, err := dump.NewReader(bytes.NewReader(tourCapture))
	require.NoError(t, err)
	prev := 0
	for i, s := range tourStops {
		f, err := tr.Next()
		require.NoError(t, err)
		require.Equal(t, frames[s.frame-1], f.Data, "stop %d is not frame %d", i+1, s.frame)

		want := map[string]int{}
		for _, op := range opcodes[prev : s.frame-1] {
			want[op]++
		}
		got := map[string]int{}
		for _, sk := range s.skipped {
			got[sk.opcode] += sk.n
		}
		assert.Equal(t, want, got, "stop %d (frame %d): skipped packets", i+1, s.frame)
		assert.Equal(t, len(s.skipped) == 0, s.why == "", "stop %d: a reason exactly when packets were skipped", i+1)
		assert.NotEmpty(t, strings.TrimSpace(s.story), "stop %d", i+1)
		prev = s.frame
	}
	_, err = tr.Next()
	assert.ErrorIs(t, err, io.EOF, "the tour capture holds frames the tour does not tell")
}

func TestTourHelpers(t *testing.T) {
	assert.Equal(t, "frame 2", framesBetween(1, 3))
	assert.Equal(t, "frames 2 and 3", framesBetween(1, 4))
	assert.Equal(t, "241 frames, 6 to 246", framesBetween(5, 247))
	assert.Equal(t, "2 RC_SEND_MIDDLE", skippedList([]tourSkip{{2, "RC_SEND_MIDDLE"}}))
	assert.Equal(t, "1 A, 2 B and 3 C", skippedList([]tourSkip{{1, "A"}, {2, "B"}, {3, "C"}}))
	assert.Equal(t, "aaa bb\ncc\ndddddddddd", wrap("aaa  bb cc\n dddddddddd", 6))
	assert.Equal(t, "", wrap("  ", 6))
}

// TestTourNarratesEveryStop: every packet is preceded by its story, and the
// two SEND MIDDLE packets the tour leaves out are named.
func TestTourNarratesEveryStop(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, Write(&b))
	out := b.String()
	assert.Equal(t, len(tourStops), strings.Count(out, "\n── "))
	assert.Contains(t, out, "\nSkipped frames 2 and 3 (2 RC_SEND_MIDDLE): the second and third KiB")
	for _, s := range tourStops {
		first := strings.SplitN(strings.TrimSpace(s.story), "\n", 2)[0]
		assert.Contains(t, out, first)
	}
}

// TestTourCaptureIsGolden checks that the embedded tour frames are frames of the golden capture,
// byte for byte, and that the tour verifies each one's ICRC.
func TestTourCaptureIsGolden(t *testing.T) {
	read := func(b []byte) []dump.Frame {
		r, err := dump.NewReader(bytes.NewReader(b))
		require.NoError(t, err)
		var fs []dump.Frame
		for {
			f, err := r.Next()
			if err != nil {
				return fs
			}
			fs = append(fs, f)
		}
	}
	golden, err := os.ReadFile(goldenPcapng)
	require.NoError(t, err)
	all, tour := read(golden), read(tourCapture)
	from := []int{1, 4, 5, 247, 427, 1511, 1512, 1911, 1961}
	require.Len(t, tour, len(from), "tour has %d frames, want %d", len(tour), len(from))
	for i, n := range from {
		assert.Equal(t, all[n-1].Data, tour[i].Data, "tour frame %d is not golden frame %d", i+1, n)
	}
	var b bytes.Buffer
	require.NoError(t, Write(&b))
	assert.Equal(t, 9, strings.Count(b.String(), "verified: OK"))
}
