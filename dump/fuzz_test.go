package dump

import (
	"encoding/json"
	"io"
	"testing"

	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/require"
)

// FuzzDecodeFrame decodes arbitrary frames as Ethernet and as raw IP, on
// port 4791 and on an added port, and prints whatever decodes in every
// format: nothing may panic, a packet is returned exactly when no error is,
// and its JSON record reads back as it was written.
func FuzzDecodeFrame(f *testing.F) {
	for _, i := range []int{1, 5, 247, 427, 1511, 1911, 1961} {
		fr := goldenFrames(f)[i-1]
		f.Add(fr.Data)      // Ethernet
		f.Add(fr.Data[14:]) // IP
	}
	demo, _ := demoFrames(f)
	for _, fr := range demo {
		f.Add(fr)
	}
	d, onPort := NewDecoder(), NewDecoder()
	onPort.AddPort(demoPort)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, c := range []struct {
			d  *Decoder
			lt gplayers.LinkType
		}{{d, gplayers.LinkTypeEthernet}, {d, gplayers.LinkTypeRaw}, {onPort, gplayers.LinkTypeRaw}} {
			p, err := c.d.Decode(Frame{Index: 1, LinkType: c.lt, Data: b, Length: len(b)})
			require.NotEqual(t, (err == nil), (p == nil), "packet %v with error %v", p, err)
			if p == nil {
				continue
			}
			_ = p.Line()
			rec := p.Record()
			js, err := json.Marshal(rec)
			require.NoError(t, err)
			var back Record
			require.NoError(t, json.Unmarshal(js, &back), "%s", js)
			require.Equal(t, rec, back, "record %+v read back as %+v", rec, back)
			require.NoError(t, p.WriteVerbose(io.Discard))
		}
	})
}
