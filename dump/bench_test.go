package dump

import (
	"io"
	"testing"
)

// BenchmarkDecodeLine decodes every golden frame and writes its summary line
// and its JSON record, the per-packet work of `gorxe dump` and `-json`.
func BenchmarkDecodeLine(b *testing.B) {
	frames := goldenFrames(b)
	d := NewDecoder()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		p, err := d.Decode(frames[i])
		if err != nil {
			b.Fatal(err)
		}
		io.WriteString(io.Discard, p.Line())
		if i++; i == len(frames) {
			i = 0
		}
	}
}

// BenchmarkVerbose writes the verbose form of an RDMA WRITE FIRST and a
// FETCH_ADD, which carry the RETH and the AtomicETH.
func BenchmarkVerbose(b *testing.B) {
	frames := goldenFrames(b)
	d := NewDecoder()
	b.ReportAllocs()
	for b.Loop() {
		for _, n := range []int{427, 1911} {
			p, err := d.Decode(frames[n-1])
			if err != nil {
				b.Fatal(err)
			}
			if err := p.WriteVerbose(io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	}
}
