package dump

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/netio"
)

// demoFaults is a capture gorxe wrote under fault injection (see the capture package's tests):
// 69 frames, of which fault injection dropped 8, corrupted 4 and copied 2.
const demoFaults = "../capture/testdata/demo-faults.pcapng.gz"

// demoFaultFrames are the frames of demoFaults fault injection touched, by what it did.
var demoFaultFrames = map[string][]int{
	"dropped":    {19, 32, 40, 44, 55, 56, 60, 63},
	"corrupted":  {2, 7, 14, 28},
	"duplicated": {50, 69},
}

// frameNumber reads the frame number at the start of a summary line.
func frameNumber(t *testing.T, line string) int {
	t.Helper()
	num, _, _ := strings.Cut(strings.TrimPrefix(line, "#"), " ")
	n, err := strconv.Atoi(num)
	require.NoError(t, err, line)
	return n
}

// TestFaultMarks dumps demoFaults: each packet fault injection dropped, corrupted or copied says
// so at the end of its line, and none other does.
func TestFaultMarks(t *testing.T) {
	out, errOut, st := runWith(t, readFile(t, demoFaults), Options{})
	assert.Empty(t, errOut)
	assert.Equal(t, Stats{Frames: 69, RoCE: 69, BadICRC: 4, Dropped: 8}, st)
	got := map[string][]int{}
	var fetchAdd string
	for line := range strings.Lines(out) {
		line = strings.TrimSuffix(line, "\n")
		if frameNumber(t, line) == 63 {
			fetchAdd = line
		}
		_, marker, ok := strings.Cut(line, " icrc=")
		require.True(t, ok, line)
		_, marker, ok = strings.Cut(marker, " ")
		if !ok {
			continue
		}
		words, ok := strings.CutSuffix(strings.TrimPrefix(marker, "["), " by fault injector]")
		require.True(t, ok, "line ends in %q", marker)
		got[words] = append(got[words], frameNumber(t, line))
	}
	assert.Equal(t, demoFaultFrames, got)
	assert.Equal(t, "#63 127.0.0.1:49408 > 127.0.0.2:4791 RC_FETCH_ADD dqpn=0x000010 psn=16001337 ackreq va=0x000039d12adf6000 rkey=0x0000010d add=8 len=0 icrc=ok [dropped by fault injector]", fetchAdd)
}

// TestFaultVerbose: -v says what fault injection did right under the summary line, and says
// nothing of it for the resend that got through.
func TestFaultVerbose(t *testing.T) {
	var f Filter
	require.NoError(t, f.AddOps("FETCH_ADD"))
	out, errOut, st := runWith(t, readFile(t, demoFaults), Options{Format: FormatVerbose, Filter: f})
	assert.Empty(t, errOut)
	require.Equal(t, 2, st.RoCE)
	dropped, resent, ok := strings.Cut(out, "\n\n#64 ")
	require.True(t, ok, out)
	lines := strings.Split(dropped, "\n")
	assert.True(t, strings.HasPrefix(lines[0], "#63 "), lines[0])
	assert.Equal(t, []string{
		"  Fault injection: what gorxe's fault injector did to this packet (the capture's packet comment)",
		"    dropped                yes                  never reached the network: the capture keeps it where it was sent",
		"  IPv4: Internet Protocol version 4 header, 20 bytes",
	}, lines[1:4])
	assert.NotContains(t, resent, "fault injector")
}

// TestFaultJSON: -json carries "fault" on exactly the packets fault injection touched, and reads
// back.
func TestFaultJSON(t *testing.T) {
	out, errOut, _ := runWith(t, readFile(t, demoFaults), Options{Format: FormatJSON})
	assert.Empty(t, errOut)
	got := map[string][]int{}
	for line := range strings.Lines(out) {
		var r Record
		require.NoError(t, json.Unmarshal([]byte(line), &r))
		var keys map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(line), &keys))
		_, hasKey := keys["fault"]
		assert.Equal(t, r.Fault != nil, hasKey, "frame %d", r.Frame)
		for _, w := range r.Fault {
			got[w] = append(got[w], r.Frame)
		}
		again, err := json.Marshal(r)
		require.NoError(t, err)
		assert.Equal(t, strings.TrimSuffix(line, "\n"), string(again), "frame %d reads back", r.Frame)
		if r.Frame == 63 {
			assert.True(t, strings.HasSuffix(line, `,"icrc_ok":true,"fault":["dropped"]}`+"\n"), line)
		}
	}
	assert.Equal(t, demoFaultFrames, got)
}

// TestFaultWords names every combination of fault marks, and a frame's comments reach the
// packet through the decoder.
func TestFaultWords(t *testing.T) {
	for _, tc := range []struct {
		fault  netio.Direction
		marker string
		words  []string
	}{
		{netio.Sent, "", nil},
		{netio.Received, "", nil},
		{netio.Lost, " [dropped by fault injector]", []string{"dropped"}},
		{netio.Duplicate, " [duplicated by fault injector]", []string{"duplicated"}},
		{netio.Duplicate | netio.Corrupt | netio.Delayed, " [duplicated, corrupted, delayed by fault injector]", []string{"duplicated", "corrupted", "delayed"}},
		{netio.Corrupt | netio.Delayed, " [corrupted, delayed by fault injector]", []string{"corrupted", "delayed"}},
	} {
		p := &Packet{Fault: tc.fault}
		assert.Equal(t, tc.words, p.Faults(), "%v", tc.fault)
		assert.Equal(t, tc.marker, p.faultMarker(), "%v", tc.fault)
	}

	frames, _ := demoFrames(t)
	d := NewDecoder()
	d.AddPort(demoPort)
	p, err := d.Decode(Frame{Index: 1, LinkType: gplayers.LinkTypeRaw, Data: frames[0], Length: len(frames[0]),
		Comments: []string{"gorxe: sent (duplicate, delayed)"}})
	require.NoError(t, err)
	assert.Equal(t, netio.Duplicate|netio.Delayed, p.Fault)
	var b bytes.Buffer
	require.NoError(t, p.WriteVerbose(&b))
	assert.Contains(t, b.String(), "\n  Fault injection: what gorxe's fault injector did to this packet (the capture's packet comment)\n"+
		"    duplicated             yes                  an extra copy of the packet before it\n"+
		"    delayed                yes                  held back by a delay or reordering, and sent late\n  IPv4: ")
}
