package dump

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// checkGolden compares got with testdata/name, or rewrites it with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := "testdata/" + name
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want := readFile(t, path)
	assert.Equal(t, want, got, "%s differs (rerun with -update if the change is intended)\ngot:\n%s\nwant:\n%s", path, got, want)
}

// goldenSelection prints the chosen frames of the golden capture with out.
func goldenSelection(t *testing.T, frames []int, out func(*bytes.Buffer, *Packet)) []byte {
	t.Helper()
	all := goldenFrames(t)
	d := NewDecoder()
	var b bytes.Buffer
	for _, i := range frames {
		p, err := d.Decode(all[i-1])
		require.NoError(t, err, "frame %d", i)
		out(&b, p)
	}
	return b.Bytes()
}

// TestLineGolden covers one packet of each kind of header combination in the
// capture: SEND first/last, ACK, UD SEND (DETH), WRITE (RETH), READ request
// and responses (AETH), FETCH_ADD and its atomic ACK.
func TestLineGolden(t *testing.T) {
	got := goldenSelection(t, []int{1, 4, 5, 247, 427, 1511, 1512, 1513, 1911, 1961, 2417}, func(b *bytes.Buffer, p *Packet) {
		b.WriteString(p.Line() + "\n")
	})
	checkGolden(t, "line.golden", got)
}

func TestVerboseGolden(t *testing.T) {
	got := goldenSelection(t, []int{5, 427, 1911}, func(b *bytes.Buffer, p *Packet) {
		require.NoError(t, p.WriteVerbose(b))
	})
	checkGolden(t, "verbose.golden", got)
}

// TestVerboseCMGolden covers the MAD section: the REQ of rping's connection in the golden
// capture, with its path and RDMA-CM header, and the DREQ that ends it.
func TestVerboseCMGolden(t *testing.T) {
	got := goldenSelection(t, []int{2411, 2534}, func(b *bytes.Buffer, p *Packet) {
		require.NoError(t, p.WriteVerbose(b))
	})
	checkGolden(t, "verbose-cm.golden", got)
}
