package dump

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLineCMMAD checks the connection manager summary on the rping handshake and teardown of the
// golden capture: kernel rxe's REQ, REP, RTU, DREQ and DREP, tied together by their IDs.
func TestLineCMMAD(t *testing.T) {
	all := goldenFrames(t)
	d := NewDecoder()
	want := map[int]string{
		2411: " cm=REQ tid=0x000000021cceb6fe lcid=0xfeb6ce1c sid=0x0000000001061c06 qpn=0x000029 spsn=0x99c403 len=256",
		2412: " cm=REP tid=0x000000021cceb6fe lcid=0x8f4b6254 rcid=0xfeb6ce1c qpn=0x000029 spsn=0x8a4ed1 len=256",
		2413: " cm=RTU tid=0x000000021cceb6fe lcid=0xfeb6ce1c rcid=0x8f4b6254 len=256",
		2534: " cm=DREQ tid=0x000000021cceb6fe lcid=0xfeb6ce1c rcid=0x8f4b6254 len=256",
		2535: " cm=DREP tid=0x000000021cceb6fe lcid=0x8f4b6254 rcid=0xfeb6ce1c len=256",
	}
	for frame, suffix := range want {
		p, err := d.Decode(all[frame-1])
		require.NoError(t, err, "frame %d", frame)
		assert.Contains(t, p.Line(), suffix, "frame %d", frame)
	}
	// Other packets carry no summary.
	p, err := d.Decode(all[0])
	require.NoError(t, err)
	assert.False(t, strings.Contains(p.Line(), " cm="), p.Line())
}
