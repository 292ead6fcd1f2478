package dump

import (
	"io"
	"testing"

	gplayers "github.com/gopacket/gopacket/layers"
)

// FuzzDecodeFrame decodes arbitrary frames as Ethernet and as raw IP and
// prints whatever decodes in every format: nothing may panic, and a packet
// is returned exactly when no error is.
func FuzzDecodeFrame(f *testing.F) {
	for _, i := range []int{1, 5, 247, 427, 1511, 1911, 1961} {
		fr := goldenFrames(f)[i-1]
		f.Add(fr.Data)      // Ethernet
		f.Add(fr.Data[14:]) // IP
	}
	d := NewDecoder()
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, lt := range []gplayers.LinkType{gplayers.LinkTypeEthernet, gplayers.LinkTypeRaw} {
			p, err := d.Decode(Frame{Index: 1, LinkType: lt, Data: b, Length: len(b)})
			if (p == nil) == (err == nil) {
				t.Fatalf("packet %v with error %v", p, err)
			}
			if p == nil {
				continue
			}
			_ = p.Line()
			_ = p.Record()
			if err := p.WriteVerbose(io.Discard); err != nil {
				t.Fatal(err)
			}
		}
	})
}
